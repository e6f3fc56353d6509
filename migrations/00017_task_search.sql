-- +goose Up
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

-- +goose Down
DROP TRIGGER tasks_fts_update;
DROP TRIGGER tasks_fts_delete;
DROP TRIGGER tasks_fts_insert;
DROP TABLE tasks_fts;
