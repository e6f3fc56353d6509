-- +goose Up
-- credential_changes (00024) counts every change that can end a credential, no longer
-- only a token's: the event hub reads the count at each commit and checks the open
-- streams' credentials again only when it moved (backend/events/hub.go), so the changes
-- below, which end an agent's or a session's credential (service.CheckCredentials and
-- the store reads it makes), must count too. Counted: deleting a row, and changing a
-- column those reads depend on. Not counted: new rows (no open stream holds them), the
-- last-seen and last-used times (they only ever move forward), names shown and the
-- event counters (projects.event_seq changes at every event). The token cache empties
-- when the count moves (store/credcache.go): these changes are rare, so that costs a
-- lookup per token afterwards, and the write that made one is acknowledged
-- foreignLookEvery (10 ms) later, as a token's revocation is.

-- An agent deleted, renamed or moved to another project.
-- +goose StatementBegin
CREATE TRIGGER agents_delete_counted AFTER DELETE ON agents BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER agents_update_counted AFTER UPDATE OF id, project_id, name ON agents BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- The project's agent secret rotated, or the project deleted.
-- +goose StatementBegin
CREATE TRIGGER projects_delete_counted AFTER DELETE ON projects BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER projects_update_counted AFTER UPDATE OF id, token_secret ON projects BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- A member removed, or its role changed (streams carry the role they began with).
-- +goose StatementBegin
CREATE TRIGGER project_members_delete_counted AFTER DELETE ON project_members BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER project_members_update_counted AFTER UPDATE OF project_id, user_id, role ON project_members BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- A person deleted.
-- +goose StatementBegin
CREATE TRIGGER users_delete_counted AFTER DELETE ON users BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER users_update_counted AFTER UPDATE OF id ON users BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- A person's session signed out, pruned, or its times changed.
-- +goose StatementBegin
CREATE TRIGGER sessions_delete_counted AFTER DELETE ON sessions BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER sessions_update_counted AFTER UPDATE OF id_hash, user_id, created_at, ended_at ON sessions BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- A token's browser session, likewise.
-- +goose StatementBegin
CREATE TRIGGER token_sessions_delete_counted AFTER DELETE ON token_sessions BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER token_sessions_update_counted AFTER UPDATE OF id_hash, token_id, created_at, ended_at ON token_sessions BEGIN
    INSERT INTO credential_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER token_sessions_update_counted;
DROP TRIGGER token_sessions_delete_counted;
DROP TRIGGER sessions_update_counted;
DROP TRIGGER sessions_delete_counted;
DROP TRIGGER users_update_counted;
DROP TRIGGER users_delete_counted;
DROP TRIGGER project_members_update_counted;
DROP TRIGGER project_members_delete_counted;
DROP TRIGGER projects_update_counted;
DROP TRIGGER projects_delete_counted;
DROP TRIGGER agents_update_counted;
DROP TRIGGER agents_delete_counted;
