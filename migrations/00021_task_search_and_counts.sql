-- +goose Up
-- Two things a board of a million tasks needs: search and counts.
--
-- Full-text search over tasks (GET /api/tasks?q=, issue 20 item 4): an FTS5 index of
-- each task's summary and details. Contentless (content=''): the index keeps only its
-- terms, not a second copy of the text; detail=none: it only answers
-- which tasks hold a word (search by prefix, no phrases, no ranking), the smallest index.
-- unicode61 with diacritics removed, no stemming: the search box matches words by
-- prefix as they are typed, which stemming would confuse.
--
-- The index is filled in the background, in bulk (store.IndexTaskSearch, like the
-- activity trail), not by the write itself: FTS5 writes a segment per transaction, which
-- cost a create 30% more CPU when each batch of writes indexed its own tasks. A write
-- only notes the task in tasks_fts_pending (a new task, a changed text, a deletion); a
-- search first indexes what is pending, so it sees every change acknowledged before it.
CREATE VIRTUAL TABLE tasks_fts USING fts5(summary, details, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', detail=none);
CREATE TABLE tasks_fts_pending (task_id INTEGER PRIMARY KEY);

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
    INSERT OR IGNORE INTO tasks_fts_pending (task_id) VALUES (new.id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
    INSERT OR IGNORE INTO tasks_fts_pending (task_id) VALUES (old.id);
END;
-- +goose StatementEnd

-- A status change writes summary and details again with the same values: only a real
-- change of the text is noted.
-- +goose StatementBegin
CREATE TRIGGER tasks_fts_update AFTER UPDATE OF summary, details ON tasks
WHEN old.summary IS NOT new.summary OR old.details IS NOT new.details BEGIN
    INSERT OR IGNORE INTO tasks_fts_pending (task_id) VALUES (new.id);
END;
-- +goose StatementEnd

-- The tasks there are already: indexed in the background after the upgrade (a search
-- indexes them first if it comes before).
INSERT INTO tasks_fts_pending (task_id) SELECT id FROM tasks;

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
DROP TABLE tasks_fts_pending;
DROP TABLE tasks_fts;
