-- +goose Up
-- Sign-in hardening (issue 37). Each /login prunes the logins under way older than ten
-- minutes (store/sessions.go): by created_at, which needs an index, or every /login
-- scans them all.
CREATE INDEX oidc_logins_created_at ON oidc_logins(created_at);

-- +goose Down
DROP INDEX oidc_logins_created_at;
