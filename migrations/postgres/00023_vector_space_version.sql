-- +goose Up
-- The twin of SQLite's 00023: a space's version, raised by every change of what a search
-- of it finds, tells each server when its cached vectors of the space are stale. (SQLite's
-- also rebuilds vector_spaces with AUTOINCREMENT so that a space id is never given again;
-- an identity column never gives an id twice already.)
ALTER TABLE vector_spaces ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE vector_spaces DROP COLUMN version;
