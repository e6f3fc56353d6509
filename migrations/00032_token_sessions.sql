-- +goose Up
-- A browser session started with a token (issue 43 item 2): the web UI trades a pasted
-- token for a session cookie (POST /api/session), so that new tabs and links are signed
-- in. It belongs to the token, not to a person (tokens may have no maker), and ends with
-- it: a token deleted takes its sessions along, one revoked or expired is refused at each
-- use. Only the SHA-256 of the cookie's value is kept, as for sessions.
CREATE TABLE token_sessions (
    id           INTEGER PRIMARY KEY,
    id_hash      BLOB NOT NULL UNIQUE,
    token_id     INTEGER NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
    csrf_token   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    ended_at     TEXT,
    user_agent   TEXT NOT NULL,
    address      TEXT NOT NULL
);
CREATE INDEX token_sessions_token ON token_sessions(token_id);

-- +goose Down
DROP TABLE token_sessions;
