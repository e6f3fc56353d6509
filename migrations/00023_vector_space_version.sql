-- +goose Up
-- A space's version goes up with every change of what a search of it finds: a document
-- (with its chunks) added or deleted, its embedder and dimensions set. A server keeps a
-- space's decoded vectors in memory only while their version is the space's, so that it
-- sees what another server (or process) on the same database wrote.
ALTER TABLE vector_spaces ADD COLUMN version INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE vector_spaces DROP COLUMN version;
