-- +goose Up
-- Sign-in hardening (issue 37). Each /login prunes the logins under way older than ten
-- minutes (store/sessions.go): by created_at, which needs an index, or every /login
-- scans them all.
CREATE INDEX oidc_logins_created_at ON oidc_logins(created_at);
-- The provider's raw ID token of a session, sent back as id_token_hint at sign-out
-- (providers such as Hydra refuse a post_logout_redirect_uri without it). It is no
-- credential for agentdesk; it is cleared when the session ends.
ALTER TABLE sessions ADD COLUMN id_token TEXT;
-- The name a project gave a person it added by email, shown there until the person
-- signs in (then their own name from the provider, users.name): a project never sees a
-- name another project gave. NULL: the person's own.
ALTER TABLE project_members ADD COLUMN name TEXT;

-- +goose Down
ALTER TABLE project_members DROP COLUMN name;
ALTER TABLE sessions DROP COLUMN id_token;
DROP INDEX oidc_logins_created_at;
