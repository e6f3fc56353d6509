-- +goose Up
-- Mentions (issue 43 item 5): the members and agents a message names with "@", found
-- by the service when the message is posted. messages.mentions is the message's own
-- list (JSON: kind, name, userId or agentId, and the text as written), returned with
-- it; message_mentions indexes the same mentions by whom they name, for a person's or an
-- agent's list of the messages that mention them.
ALTER TABLE messages ADD COLUMN mentions TEXT NOT NULL DEFAULT '[]';
CREATE TABLE message_mentions (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('user', 'agent')),
    target_id  INTEGER NOT NULL, -- users.id or agents.id, by kind
    PRIMARY KEY (kind, target_id, message_id)
);
CREATE INDEX message_mentions_message ON message_mentions(message_id);

-- +goose Down
DROP TABLE message_mentions;
ALTER TABLE messages DROP COLUMN mentions;
