-- +goose Up
-- The twin of SQLite's 00028: the logins under way are pruned by created_at.
CREATE INDEX oidc_logins_created_at ON oidc_logins(created_at);

-- +goose Down
DROP INDEX oidc_logins_created_at;
