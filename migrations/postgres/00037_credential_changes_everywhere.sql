-- +goose Up
-- The twin of SQLite's 00037, which says why: every change that can end an agent's or a
-- session's credential counts in credential_changes, as a token's does (00026).

CREATE TRIGGER agents_delete_counted AFTER DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER agents_update_counted AFTER UPDATE OF id, project_id, name ON agents
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER projects_delete_counted AFTER DELETE ON projects
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER projects_update_counted AFTER UPDATE OF id, token_secret ON projects
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER project_members_delete_counted AFTER DELETE ON project_members
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER project_members_update_counted AFTER UPDATE OF project_id, user_id, role ON project_members
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER users_delete_counted AFTER DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER users_update_counted AFTER UPDATE OF id ON users
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER sessions_delete_counted AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER sessions_update_counted AFTER UPDATE OF id_hash, user_id, created_at, ended_at ON sessions
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER token_sessions_delete_counted AFTER DELETE ON token_sessions
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();
CREATE TRIGGER token_sessions_update_counted AFTER UPDATE OF id_hash, token_id, created_at, ended_at ON token_sessions
    FOR EACH ROW EXECUTE FUNCTION credential_changes_count();

-- +goose Down
DROP TRIGGER token_sessions_delete_counted ON token_sessions;
DROP TRIGGER token_sessions_update_counted ON token_sessions;
DROP TRIGGER sessions_delete_counted ON sessions;
DROP TRIGGER sessions_update_counted ON sessions;
DROP TRIGGER users_delete_counted ON users;
DROP TRIGGER users_update_counted ON users;
DROP TRIGGER project_members_delete_counted ON project_members;
DROP TRIGGER project_members_update_counted ON project_members;
DROP TRIGGER projects_delete_counted ON projects;
DROP TRIGGER projects_update_counted ON projects;
DROP TRIGGER agents_delete_counted ON agents;
DROP TRIGGER agents_update_counted ON agents;
