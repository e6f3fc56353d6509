-- +goose Up
-- The foundation: projects, the local owner, agents, tokens, tasks with their steps and
-- conversation entries, idempotency keys and the event log (a transactional outbox).

CREATE TABLE projects (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    token_secret TEXT NOT NULL,
    event_seq    INTEGER NOT NULL DEFAULT 0, -- last event seq written for this project
    created_at   TEXT NOT NULL
);

CREATE TABLE users (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    is_owner   INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

CREATE TABLE agents (
    id         INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (project_id, name)
);

CREATE TABLE tokens (
    id           INTEGER PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    type         TEXT NOT NULL CHECK (type IN ('platform', 'data')),
    scopes       TEXT NOT NULL,            -- space-separated
    hash         BLOB NOT NULL UNIQUE,     -- SHA-256 of the token value; the value is never stored
    hint         TEXT NOT NULL,            -- first characters of the value, to recognise it in lists
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    last_used_at TEXT,
    revoked_at   TEXT
);
CREATE INDEX tokens_project ON tokens(project_id);

CREATE TABLE tasks (
    id              INTEGER PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id        INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    summary         TEXT NOT NULL,
    details         TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    source          TEXT NOT NULL,
    task_type       TEXT NOT NULL,
    waiting_details TEXT,
    waiting_version INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX tasks_project ON tasks(project_id, id);
CREATE INDEX tasks_project_status ON tasks(project_id, status, id);
CREATE INDEX tasks_agent ON tasks(agent_id, id);

CREATE TABLE steps (
    id       INTEGER PRIMARY KEY,
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    title    TEXT NOT NULL,
    status   TEXT NOT NULL,
    UNIQUE (task_id, position)
);

CREATE TABLE task_messages (
    id         INTEGER PRIMARY KEY,
    task_id    INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX task_messages_task ON task_messages(task_id, id);

CREATE TABLE idempotency_keys (
    project_id   TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    fingerprint  BLOB NOT NULL,   -- SHA-256 of the operation and its decoded request
    result       BLOB NOT NULL,   -- the first answer, as JSON
    created_at   TEXT NOT NULL,
    PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    type       TEXT NOT NULL,
    data       BLOB NOT NULL,     -- JSON
    at         TEXT NOT NULL,
    UNIQUE (project_id, seq)
);
CREATE INDEX events_at ON events(at);

-- +goose Down
DROP TABLE events;
DROP TABLE idempotency_keys;
DROP TABLE task_messages;
DROP TABLE steps;
DROP TABLE tasks;
DROP TABLE tokens;
DROP TABLE agents;
DROP TABLE users;
DROP TABLE projects;
