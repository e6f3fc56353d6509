-- +goose Up
-- Most tasks belong to no conversation; a partial index leaves them out, so creating
-- such a task updates one B-tree fewer. Lookups by conversation_id = ? still use it.
DROP INDEX tasks_conversation;
CREATE INDEX tasks_conversation ON tasks(conversation_id, id) WHERE conversation_id IS NOT NULL;

-- +goose Down
DROP INDEX tasks_conversation;
CREATE INDEX tasks_conversation ON tasks(conversation_id, id);
