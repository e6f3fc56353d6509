-- +goose Up
-- Every change of a task bumps its version (store.UpdateTask, and the changes that reach
-- a task from elsewhere: its agent deleted, a skill it requires renamed or deleted).
-- REST derives the task's ETag from it, for If-None-Match and If-Match; unlike
-- updated_at, it differs for two changes within the same instant.
ALTER TABLE tasks ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE tasks DROP COLUMN version;
