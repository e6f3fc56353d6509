-- +goose Up
-- Vector knowledge bases, for data tokens: spaces of a project hold documents, cut into
-- chunks, each with its text and its vector (float32s, little-endian, unit length). An
-- FTS5 index over the chunk text gives the keyword (BM25) ranking that search fuses
-- with the vector ranking. Spaces may be linked to agents.

CREATE TABLE vector_spaces (
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

CREATE TABLE vector_documents (
    id         INTEGER PRIMARY KEY,
    space_id   INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    mime_type  TEXT NOT NULL,
    size       INTEGER NOT NULL,
    chunks     INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX vector_documents_space ON vector_documents(space_id, id);

CREATE TABLE vector_chunks (
    id          INTEGER PRIMARY KEY,
    space_id    INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
    document_id INTEGER NOT NULL REFERENCES vector_documents(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    text        TEXT NOT NULL,
    vector      BLOB NOT NULL
);
CREATE INDEX vector_chunks_space ON vector_chunks(space_id, id);
CREATE INDEX vector_chunks_document ON vector_chunks(document_id);

-- Contentless: the text lives in vector_chunks; the space column ("s" and the space id)
-- lets a query stay inside one space.
CREATE VIRTUAL TABLE vector_chunks_fts USING fts5(text, space, content='', contentless_delete=1, tokenize='porter unicode61');

-- +goose StatementBegin
CREATE TRIGGER vector_chunks_fts_insert AFTER INSERT ON vector_chunks BEGIN
    INSERT INTO vector_chunks_fts (rowid, text, space) VALUES (new.id, new.text, 's' || new.space_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER vector_chunks_fts_delete AFTER DELETE ON vector_chunks BEGIN
    DELETE FROM vector_chunks_fts WHERE rowid = old.id;
END;
-- +goose StatementEnd

CREATE TABLE vector_space_agents (
    space_id   INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
    agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (space_id, agent_id)
);
CREATE INDEX vector_space_agents_agent ON vector_space_agents(agent_id);

-- +goose Down
DROP TABLE vector_space_agents;
DROP TRIGGER vector_chunks_fts_delete;
DROP TRIGGER vector_chunks_fts_insert;
DROP TABLE vector_chunks_fts;
DROP TABLE vector_chunks;
DROP TABLE vector_documents;
DROP TABLE vector_spaces;
