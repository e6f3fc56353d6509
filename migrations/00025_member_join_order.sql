-- +goose Up
-- The order memberships were made in, explicit: a user's first membership is a
-- session's default project, and memberships made at the same moment (same created_at)
-- list in this order on both engines (PostgreSQL has no rowid). A new membership takes
-- the highest value plus one (store/members.go); existing ones keep their rowid order.
ALTER TABLE project_members ADD COLUMN join_order INTEGER NOT NULL DEFAULT 0;
UPDATE project_members SET join_order = rowid;
CREATE INDEX project_members_join_order ON project_members(join_order);

-- +goose Down
DROP INDEX project_members_join_order;
ALTER TABLE project_members DROP COLUMN join_order;
