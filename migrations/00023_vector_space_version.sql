-- +goose NO TRANSACTION
-- +goose Up
-- A space's version goes up with every change of what a search of it finds: a document
-- (with its chunks) added or deleted, its embedder and dimensions set. A server keeps a
-- space's decoded vectors in memory only while their version is the space's, so that it
-- sees what another server (or process) on the same database wrote.
--
-- That holds only if a space id never names another space: a plain INTEGER PRIMARY KEY
-- gives a deleted newest space's id to the next space, whose version starts again at 0
-- and could meet the deleted one's. So vector_spaces is rebuilt with AUTOINCREMENT, as
-- 00011 did for tasks (create, copy with ids, drop, rename; foreign keys off meanwhile,
-- hence NO TRANSACTION and an explicit transaction that checks every reference before
-- it commits). Its sequence starts at the highest space id the database remembers: its
-- rows, the event log and the activity trail. (PostgreSQL's identity never reuses ids.)
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE vector_spaces_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id     TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    embedder       TEXT NOT NULL DEFAULT '',  -- where its vectors come from; '' until the first document
    dimensions     INTEGER NOT NULL DEFAULT 0,
    document_count INTEGER NOT NULL DEFAULT 0,
    chunk_count    INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    version        INTEGER NOT NULL DEFAULT 0,
    UNIQUE (project_id, name)
);
INSERT INTO vector_spaces_new (id, project_id, name, description, embedder, dimensions, document_count, chunk_count, created_at)
    SELECT id, project_id, name, description, embedder, dimensions, document_count, chunk_count, created_at FROM vector_spaces;

-- The copy set the sequence to the largest id copied; an empty table has no row yet.
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'vector_spaces_new', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'vector_spaces_new');
UPDATE sqlite_sequence SET seq = max(seq,
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM events WHERE type LIKE 'vector.space.%'), 0),
    COALESCE((SELECT max(CAST(object_id AS INTEGER)) FROM activity WHERE action LIKE 'vector.space.%'), 0),
    COALESCE((SELECT s.seq FROM sqlite_sequence s WHERE s.name = 'vector_spaces'), 0))
WHERE name = 'vector_spaces_new';

-- The other tables' REFERENCES name vector_spaces, so they point at the rebuilt one.
DROP TABLE vector_spaces;
ALTER TABLE vector_spaces_new RENAME TO vector_spaces;

-- Every reference must still hold: a violation fails this CHECK and the transaction.
CREATE TEMP TABLE references_hold (violations INTEGER CHECK (violations = 0));
INSERT INTO references_hold SELECT count(*) FROM pragma_foreign_key_check;
DROP TABLE references_hold;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- Back to a plain INTEGER PRIMARY KEY without the version, with the same rebuild; the
-- rows keep their ids.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE vector_spaces_old (
    id             INTEGER PRIMARY KEY,
    project_id     TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    embedder       TEXT NOT NULL DEFAULT '',  -- where its vectors come from; '' until the first document
    dimensions     INTEGER NOT NULL DEFAULT 0,
    document_count INTEGER NOT NULL DEFAULT 0,
    chunk_count    INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    UNIQUE (project_id, name)
);
INSERT INTO vector_spaces_old (id, project_id, name, description, embedder, dimensions, document_count, chunk_count, created_at)
    SELECT id, project_id, name, description, embedder, dimensions, document_count, chunk_count, created_at FROM vector_spaces;
DROP TABLE vector_spaces;
ALTER TABLE vector_spaces_old RENAME TO vector_spaces;

CREATE TEMP TABLE references_hold (violations INTEGER CHECK (violations = 0));
INSERT INTO references_hold SELECT count(*) FROM pragma_foreign_key_check;
DROP TABLE references_hold;
COMMIT;
PRAGMA foreign_keys = ON;
