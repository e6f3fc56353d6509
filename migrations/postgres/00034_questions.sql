-- +goose Up
-- Questions with structure, deadlines and a person to ask (issue 40); SQLite's twin says
-- why. The JSON columns are text, as SQLite keeps them: a schema comes back as it was given.
ALTER TABLE tasks ADD COLUMN waiting_options text COLLATE "C";
ALTER TABLE tasks ADD COLUMN waiting_schema text COLLATE "C";
ALTER TABLE tasks ADD COLUMN waiting_expires_at text COLLATE "C";
ALTER TABLE tasks ADD COLUMN waiting_on_expiry text COLLATE "C";
ALTER TABLE tasks ADD COLUMN waiting_default text COLLATE "C";
ALTER TABLE tasks ADD COLUMN waiting_ask text COLLATE "C";
ALTER TABLE tasks ADD COLUMN created_by bigint;
ALTER TABLE task_messages ADD COLUMN data text COLLATE "C";
CREATE INDEX tasks_waiting_expires ON tasks(waiting_expires_at) WHERE waiting_expires_at IS NOT NULL;

-- +goose Down
DROP INDEX tasks_waiting_expires;
ALTER TABLE task_messages DROP COLUMN data;
ALTER TABLE tasks DROP COLUMN created_by;
ALTER TABLE tasks DROP COLUMN waiting_ask;
ALTER TABLE tasks DROP COLUMN waiting_default;
ALTER TABLE tasks DROP COLUMN waiting_on_expiry;
ALTER TABLE tasks DROP COLUMN waiting_expires_at;
ALTER TABLE tasks DROP COLUMN waiting_schema;
ALTER TABLE tasks DROP COLUMN waiting_options;
