-- +goose Up
-- PostgreSQL now caches tokens too (store/credcache.go): the changes to existing tokens
-- are counted as on SQLite (00024), by the same rule. Not counted: a new token (only
-- tokens that exist are cached, by their unique hash) and last_used_at (authentication
-- does not read it).
-- +goose StatementBegin
CREATE FUNCTION credential_changes_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = credential_changes.n + 1;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER tokens_delete_counted AFTER DELETE ON tokens
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER tokens_update_counted AFTER UPDATE OF id, project_id, name, type, scopes, hash, hint, created_at, expires_at, revoked_at ON tokens
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();

-- +goose Down
DROP TRIGGER tokens_update_counted ON tokens;
DROP TRIGGER tokens_delete_counted ON tokens;
DROP FUNCTION credential_changes_count();
