-- +goose Up
-- A count of the changes to existing tokens, kept by triggers: the store caches the
-- tokens that authentication looks up (store/credcache.go), and its writer reads this
-- count once a batch to know, whatever statement changed a token (a revocation, a
-- rotation, a project's deletion cascading), that the cache must be emptied before the
-- batch's writes are acknowledged. Not counted: a new token (only tokens that exist are
-- cached, by their unique hash) and last_used_at (authentication does not read it).
CREATE TABLE credential_changes (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
-- +goose StatementBegin
CREATE TRIGGER tokens_delete_counted AFTER DELETE ON tokens BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER tokens_update_counted AFTER UPDATE OF id, project_id, name, type, scopes, hash, hint, created_at, expires_at, revoked_at ON tokens BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER tokens_update_counted;
DROP TRIGGER tokens_delete_counted;
DROP TABLE credential_changes;
