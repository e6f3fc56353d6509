-- +goose Up
-- The twin of SQLite's 00022: an answer (respond) keeps the question it answered.
ALTER TABLE task_messages ADD COLUMN question text COLLATE "C";

-- +goose Down
ALTER TABLE task_messages DROP COLUMN question;
