-- +goose Up
-- Who wrote each entry of a task's conversation ("answered by Dana", issue 18): the
-- actor's name as the activity trail gives it (a person, a token, an agent, the local
-- owner). NULL for entries written before.
ALTER TABLE task_messages ADD COLUMN author TEXT;

-- +goose Down
ALTER TABLE task_messages DROP COLUMN author;
