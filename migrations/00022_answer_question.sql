-- +goose Up
-- An answer (respond) keeps the question it answered: waiting_details holds only the
-- current question, and the thread shows each earlier one above its answer.
ALTER TABLE task_messages ADD COLUMN question TEXT;

-- +goose Down
ALTER TABLE task_messages DROP COLUMN question;
