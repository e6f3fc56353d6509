-- +goose Up
-- The twin of SQLite's 00028: the logins under way are pruned by created_at, a
-- session keeps the provider's ID token for sign-out's id_token_hint, and a membership
-- the name its project gave the person.
CREATE INDEX oidc_logins_created_at ON oidc_logins(created_at);
ALTER TABLE sessions ADD COLUMN id_token text;
ALTER TABLE project_members ADD COLUMN name text COLLATE "C";

-- +goose Down
ALTER TABLE project_members DROP COLUMN name;
ALTER TABLE sessions DROP COLUMN id_token;
DROP INDEX oidc_logins_created_at;
