-- +goose Up
-- Members: the users of a project and their roles; agent profiles (display name and
-- description).

ALTER TABLE users ADD COLUMN email TEXT; -- lowercased; unique when set
CREATE UNIQUE INDEX users_email ON users(email) WHERE email IS NOT NULL;

CREATE TABLE project_members (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members(user_id);

-- The local owner owns every project that exists already; new projects get their
-- owner from the service.
INSERT INTO project_members (project_id, user_id, role, created_at, updated_at)
SELECT p.id, u.id, 'owner', p.created_at, p.created_at FROM projects p, users u WHERE u.is_owner = 1;

ALTER TABLE agents ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN description TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN description;
ALTER TABLE agents DROP COLUMN display_name;
DROP TABLE project_members;
DROP INDEX users_email;
ALTER TABLE users DROP COLUMN email;
