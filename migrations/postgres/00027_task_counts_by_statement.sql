-- +goose Up
-- A batch of creates now inserts its tasks in one statement (store/pgdefer.go), and
-- task_counts follows the inserts once per statement rather than once per row: for a
-- batch of eight creates this trigger was about a third of PostgreSQL's time
-- (docs/postgres.md). Updates and deletes keep 00021's trigger per row.
-- +goose StatementBegin
CREATE FUNCTION task_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts (project_id, status, n)
    SELECT project_id, status, count(*) FROM inserted GROUP BY project_id, status
    ON CONFLICT (project_id, status) DO UPDATE SET n = task_counts.n + excluded.n;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
DROP TRIGGER task_counts_insert ON tasks;
CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION task_counts_inserted();

-- +goose Down
DROP TRIGGER task_counts_insert ON tasks;
CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks
    FOR EACH ROW EXECUTE FUNCTION task_counts_change();
DROP FUNCTION task_counts_inserted();
