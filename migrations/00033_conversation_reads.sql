-- +goose Up
-- Read markers (issue 43 item 6): how far each person has read each conversation, the
-- same on every device. reader names the person (the service's readerOf: "user:<id>" for
-- a signed-in user and the tokens they made, "token:<id>" for a token nobody made,
-- "owner" for the local owner); agents have none. The marker only moves forward.
CREATE TABLE conversation_reads (
    conversation_id      INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    reader               TEXT NOT NULL,
    last_read_message_id INTEGER NOT NULL,
    updated_at           TEXT NOT NULL,
    PRIMARY KEY (conversation_id, reader)
);

-- +goose Down
DROP TABLE conversation_reads;
