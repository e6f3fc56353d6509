-- +goose Up
-- Read markers (issue 43 item 6); SQLite's twin says why.
CREATE TABLE conversation_reads (
    conversation_id      bigint NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    reader               text COLLATE "C" NOT NULL,
    last_read_message_id bigint NOT NULL,
    updated_at           text COLLATE "C" NOT NULL,
    PRIMARY KEY (conversation_id, reader)
);

-- +goose Down
DROP TABLE conversation_reads;
