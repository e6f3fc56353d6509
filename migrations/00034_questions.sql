-- +goose Up
-- Questions with structure, deadlines and a person to ask (issue 40). A Waiting task's
-- question may carry options (a JSON array of strings) or a schema (a JSON object, as
-- given), a deadline with what happens then (fail, or answer with waiting_default, JSON),
-- and the person asked (an email). All are null while the task does not wait. created_by
-- is the user who created the task (themselves, or a token they made), the person asked
-- when the question names nobody. A conversation entry keeps the structured answer in
-- data (JSON), null for text.
ALTER TABLE tasks ADD COLUMN waiting_options TEXT;
ALTER TABLE tasks ADD COLUMN waiting_schema TEXT;
ALTER TABLE tasks ADD COLUMN waiting_expires_at TEXT;
ALTER TABLE tasks ADD COLUMN waiting_on_expiry TEXT;
ALTER TABLE tasks ADD COLUMN waiting_default TEXT;
ALTER TABLE tasks ADD COLUMN waiting_ask TEXT;
ALTER TABLE tasks ADD COLUMN created_by INTEGER;
ALTER TABLE task_messages ADD COLUMN data TEXT;
-- The deadlines to fire: few rows, read every second.
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
