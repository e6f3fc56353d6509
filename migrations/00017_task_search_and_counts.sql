-- +goose Up
-- Two things a board of a million tasks needs: search and counts.
--
-- Full-text search over tasks (GET /api/tasks?q=, issue 20 item 4): an FTS5 index of
-- each task's summary and details. External content (content='tasks'): the index keeps
-- only its terms, not a second copy of the text. Triggers keep it in step with every
-- write; the update trigger fires only when the text really changed (a status change
-- rewrites summary and details with the same values, and must not re-index them).
-- unicode61 with diacritics removed, no stemming: the search box matches words by
-- prefix as they are typed, which stemming would confuse.
CREATE VIRTUAL TABLE tasks_fts USING fts5(summary, details, content='tasks', content_rowid='id', tokenize='unicode61 remove_diacritics 2');

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_fts (rowid, summary, details) VALUES (new.id, new.summary, new.details);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
    INSERT INTO tasks_fts (tasks_fts, rowid, summary, details) VALUES ('delete', old.id, old.summary, old.details);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_update AFTER UPDATE OF summary, details ON tasks
WHEN old.summary IS NOT new.summary OR old.details IS NOT new.details BEGIN
    INSERT INTO tasks_fts (tasks_fts, rowid, summary, details) VALUES ('delete', old.id, old.summary, old.details);
    INSERT INTO tasks_fts (rowid, summary, details) VALUES (new.id, new.summary, new.details);
END;
-- +goose StatementEnd

-- The tasks there are already.
INSERT INTO tasks_fts (tasks_fts) VALUES ('rebuild');

-- The number of tasks in each status of each project (GET /api/tasks/counts, issue 25):
-- kept by triggers, so that a board's counts cost one small read whatever the project's
-- size (COUNT(*) over a million tasks' index takes a few hundred milliseconds).
CREATE TABLE task_counts (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    status     TEXT NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (project_id, status)
) WITHOUT ROWID;
INSERT INTO task_counts (project_id, status, n) SELECT project_id, status, COUNT(*) FROM tasks GROUP BY project_id, status;

-- +goose StatementBegin
CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (project_id, status, n) VALUES (new.project_id, new.status, 1)
    ON CONFLICT (project_id, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_counts SET n = n - 1 WHERE project_id = old.project_id AND status = old.status;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER task_counts_update AFTER UPDATE OF status, project_id ON tasks
WHEN old.status IS NOT new.status OR old.project_id IS NOT new.project_id BEGIN
    UPDATE task_counts SET n = n - 1 WHERE project_id = old.project_id AND status = old.status;
    INSERT INTO task_counts (project_id, status, n) VALUES (new.project_id, new.status, 1)
    ON CONFLICT (project_id, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER task_counts_update;
DROP TRIGGER task_counts_delete;
DROP TRIGGER task_counts_insert;
DROP TABLE task_counts;
DROP TRIGGER tasks_fts_update;
DROP TRIGGER tasks_fts_delete;
DROP TRIGGER tasks_fts_insert;
DROP TABLE tasks_fts;
