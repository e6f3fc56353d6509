-- +goose Up
-- Conversations: threads of messages in a project, with participants, reactions, shared
-- documents (stored in the database, so that a backup holds them) and linked tasks.

CREATE TABLE conversations (
    id         INTEGER PRIMARY KEY,
    uuid       TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name       TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX conversations_project ON conversations(project_id, id);

CREATE TABLE conversation_participants (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('user', 'agent')),
    name            TEXT NOT NULL,
    agent_id        INTEGER REFERENCES agents(id) ON DELETE CASCADE,
    created_at      TEXT NOT NULL,
    UNIQUE (conversation_id, kind, name)
);

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    author          TEXT NOT NULL,
    author_type     TEXT NOT NULL CHECK (author_type IN ('user', 'agent')),
    agent_id        INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE INDEX messages_conversation ON messages(conversation_id, id);

CREATE TABLE reactions (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    emoji      TEXT NOT NULL,
    actor_kind TEXT NOT NULL CHECK (actor_kind IN ('user', 'agent')),
    actor      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (message_id, emoji, actor_kind, actor)
);

CREATE TABLE documents (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    mime_type       TEXT NOT NULL,
    size            INTEGER NOT NULL,
    content         BLOB NOT NULL,
    uploaded_by     TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE INDEX documents_conversation ON documents(conversation_id, id);

ALTER TABLE tasks ADD COLUMN conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL;
CREATE INDEX tasks_conversation ON tasks(conversation_id, id);

-- +goose Down
DROP INDEX tasks_conversation;
ALTER TABLE tasks DROP COLUMN conversation_id;
DROP TABLE documents;
DROP TABLE reactions;
DROP TABLE messages;
DROP TABLE conversation_participants;
DROP TABLE conversations;
