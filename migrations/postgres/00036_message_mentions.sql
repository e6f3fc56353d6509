-- +goose Up
-- Mentions (issue 43 item 5); SQLite's twin says why.
ALTER TABLE messages ADD COLUMN mentions text COLLATE "C" NOT NULL DEFAULT '[]';
CREATE TABLE message_mentions (
    message_id bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    kind       text COLLATE "C" NOT NULL CHECK (kind IN ('user', 'agent')),
    target_id  bigint NOT NULL,
    PRIMARY KEY (kind, target_id, message_id)
);
CREATE INDEX message_mentions_message ON message_mentions(message_id);

-- +goose Down
DROP TABLE message_mentions;
ALTER TABLE messages DROP COLUMN mentions;
