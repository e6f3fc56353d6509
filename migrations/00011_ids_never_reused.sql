-- +goose NO TRANSACTION
-- +goose Up
-- Task, agent, conversation and message ids are never reused, even after a deletion:
-- an agent holding a deleted task's id must never act on a stranger's task. A plain
-- INTEGER PRIMARY KEY takes the largest id + 1, so deleting the newest row gave its id
-- to the next one; AUTOINCREMENT never does. (Step ids follow from the task id,
-- model.StepID, so they are never reused either.)
--
-- SQLite cannot add AUTOINCREMENT to a column: each table is rebuilt (create, copy with
-- its ids, drop, rename, recreate its indexes; none of them has triggers). The other
-- tables' REFERENCES name the table, so they point at the rebuilt one. Dropping a table
-- that is referenced must not cascade, so foreign keys are off during the rebuild (the
-- pragma is a no-op inside a transaction: hence NO TRANSACTION and an explicit one),
-- and the transaction checks that every reference is still valid before it commits.
--
-- Each table's sequence starts at the highest id it has ever given out, as far as the
-- database remembers: its rows, the event log and the activity trail (object ids), the
-- usage records and job runs that keep the ids of deleted tasks and agents.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE tasks_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
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
    updated_at      TEXT NOT NULL,
    conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    steps           TEXT NOT NULL DEFAULT '[]'
);
INSERT INTO tasks_new (id, project_id, agent_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, conversation_id, steps)
    SELECT id, project_id, agent_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, conversation_id, steps FROM tasks;

CREATE TABLE agents_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    description  TEXT NOT NULL DEFAULT '',
    UNIQUE (project_id, name)
);
INSERT INTO agents_new (id, project_id, name, created_at, display_name, description)
    SELECT id, project_id, name, created_at, display_name, description FROM agents;

CREATE TABLE conversations_new (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid       TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name       TEXT,
    created_at TEXT NOT NULL
);
INSERT INTO conversations_new (id, uuid, project_id, name, created_at)
    SELECT id, uuid, project_id, name, created_at FROM conversations;

CREATE TABLE messages_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    author          TEXT NOT NULL,
    author_type     TEXT NOT NULL CHECK (author_type IN ('user', 'agent')),
    agent_id        INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
INSERT INTO messages_new (id, conversation_id, author, author_type, agent_id, content, created_at)
    SELECT id, conversation_id, author, author_type, agent_id, content, created_at FROM messages;

-- The copies set each sequence to the largest id copied; an empty table has no row yet.
-- An earlier sequence (this migration run before, then undone) counts too.
INSERT INTO sqlite_sequence (name, seq)
    SELECT t.name, 0 FROM (SELECT 'tasks_new' AS name UNION ALL SELECT 'agents_new' UNION ALL SELECT 'conversations_new' UNION ALL SELECT 'messages_new') t
    WHERE t.name NOT IN (SELECT name FROM sqlite_sequence);
UPDATE sqlite_sequence SET seq = max(seq,
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM events WHERE type IN ('task.created', 'task.updated', 'task.deleted')), 0),
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM activity WHERE object_type = 'task'), 0),
    COALESCE((SELECT max(task_id) FROM job_runs), 0),
    COALESCE((SELECT max(task_id) FROM usage_records), 0),
    COALESCE((SELECT s.seq FROM sqlite_sequence s WHERE s.name = 'tasks'), 0))
WHERE name = 'tasks_new';
UPDATE sqlite_sequence SET seq = max(seq,
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM events WHERE type LIKE 'agent.%'), 0),
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM activity WHERE object_type = 'agent'), 0),
    COALESCE((SELECT max(agent_id) FROM usage_records), 0),
    COALESCE((SELECT s.seq FROM sqlite_sequence s WHERE s.name = 'agents'), 0))
WHERE name = 'agents_new';
UPDATE sqlite_sequence SET seq = max(seq,
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM events WHERE type = 'conversation.created'), 0),
    COALESCE((SELECT s.seq FROM sqlite_sequence s WHERE s.name = 'conversations'), 0))
WHERE name = 'conversations_new';
UPDATE sqlite_sequence SET seq = max(seq,
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM events WHERE type = 'message.created'), 0),
    COALESCE((SELECT s.seq FROM sqlite_sequence s WHERE s.name = 'messages'), 0))
WHERE name = 'messages_new';

-- Dropping a table drops its indexes (and its sequence row); renaming carries the new
-- table's sequence row along.
DROP TABLE tasks;
ALTER TABLE tasks_new RENAME TO tasks;
CREATE INDEX tasks_project ON tasks(project_id, id);
CREATE INDEX tasks_project_status ON tasks(project_id, status, id);
CREATE INDEX tasks_agent ON tasks(agent_id, id);
CREATE INDEX tasks_conversation ON tasks(conversation_id, id) WHERE conversation_id IS NOT NULL;
DROP TABLE agents;
ALTER TABLE agents_new RENAME TO agents;
DROP TABLE conversations;
ALTER TABLE conversations_new RENAME TO conversations;
CREATE INDEX conversations_project ON conversations(project_id, id);
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_conversation ON messages(conversation_id, id);

-- Every reference must still hold: a violation fails this CHECK and the transaction.
CREATE TEMP TABLE references_hold (violations INTEGER CHECK (violations = 0));
INSERT INTO references_hold SELECT count(*) FROM pragma_foreign_key_check;
DROP TABLE references_hold;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- Back to plain INTEGER PRIMARY KEYs, with the same rebuild; the rows keep their ids.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE tasks_old (
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
    updated_at      TEXT NOT NULL,
    conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    steps           TEXT NOT NULL DEFAULT '[]'
);
INSERT INTO tasks_old (id, project_id, agent_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, conversation_id, steps)
    SELECT id, project_id, agent_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, conversation_id, steps FROM tasks;
DROP TABLE tasks;
ALTER TABLE tasks_old RENAME TO tasks;
CREATE INDEX tasks_project ON tasks(project_id, id);
CREATE INDEX tasks_project_status ON tasks(project_id, status, id);
CREATE INDEX tasks_agent ON tasks(agent_id, id);
CREATE INDEX tasks_conversation ON tasks(conversation_id, id) WHERE conversation_id IS NOT NULL;

CREATE TABLE agents_old (
    id           INTEGER PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    description  TEXT NOT NULL DEFAULT '',
    UNIQUE (project_id, name)
);
INSERT INTO agents_old (id, project_id, name, created_at, display_name, description)
    SELECT id, project_id, name, created_at, display_name, description FROM agents;
DROP TABLE agents;
ALTER TABLE agents_old RENAME TO agents;

CREATE TABLE conversations_old (
    id         INTEGER PRIMARY KEY,
    uuid       TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name       TEXT,
    created_at TEXT NOT NULL
);
INSERT INTO conversations_old (id, uuid, project_id, name, created_at)
    SELECT id, uuid, project_id, name, created_at FROM conversations;
DROP TABLE conversations;
ALTER TABLE conversations_old RENAME TO conversations;
CREATE INDEX conversations_project ON conversations(project_id, id);

CREATE TABLE messages_old (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    author          TEXT NOT NULL,
    author_type     TEXT NOT NULL CHECK (author_type IN ('user', 'agent')),
    agent_id        INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
INSERT INTO messages_old (id, conversation_id, author, author_type, agent_id, content, created_at)
    SELECT id, conversation_id, author, author_type, agent_id, content, created_at FROM messages;
DROP TABLE messages;
ALTER TABLE messages_old RENAME TO messages;
CREATE INDEX messages_conversation ON messages(conversation_id, id);

CREATE TEMP TABLE references_hold (violations INTEGER CHECK (violations = 0));
INSERT INTO references_hold SELECT count(*) FROM pragma_foreign_key_check;
DROP TABLE references_hold;
COMMIT;
PRAGMA foreign_keys = ON;
