-- +goose Up
-- Team mode (issue 18): people signed in with OpenID Connect, their browser sessions,
-- and the logins under way.

-- A person is known by the provider that signed them in (issuer) and its id for them
-- (subject); invited users have neither until their first sign-in links them.
ALTER TABLE users ADD COLUMN oidc_issuer TEXT;
ALTER TABLE users ADD COLUMN oidc_subject TEXT;
CREATE UNIQUE INDEX users_oidc ON users(oidc_issuer, oidc_subject) WHERE oidc_issuer IS NOT NULL;

-- A browser session: only the SHA-256 of the cookie's value is kept.
CREATE TABLE sessions (
    id           INTEGER PRIMARY KEY,
    id_hash      BLOB NOT NULL UNIQUE,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_token   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    ended_at     TEXT
);
CREATE INDEX sessions_user ON sessions(user_id);

-- A login under way, between /login and /auth/callback: taken (deleted) once.
CREATE TABLE oidc_logins (
    state      TEXT PRIMARY KEY,
    nonce      TEXT NOT NULL,
    verifier   TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- +goose Down
DROP TABLE oidc_logins;
DROP TABLE sessions;
DROP INDEX users_oidc;
ALTER TABLE users DROP COLUMN oidc_subject;
ALTER TABLE users DROP COLUMN oidc_issuer;
