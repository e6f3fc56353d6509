-- +goose Up
-- The twin of SQLite's 00028: the logins under way are pruned by created_at, and a
-- session keeps the provider's ID token for sign-out's id_token_hint.
CREATE INDEX oidc_logins_created_at ON oidc_logins(created_at);
ALTER TABLE sessions ADD COLUMN id_token text;

-- +goose Down
ALTER TABLE sessions DROP COLUMN id_token;
DROP INDEX oidc_logins_created_at;
