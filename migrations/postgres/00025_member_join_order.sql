-- +goose Up
-- The twin of SQLite's 00025. Existing memberships are numbered in the order they
-- listed in until now: created_at, then the row's transaction (xmin) and place (ctid).
-- Two servers adding memberships to different projects at once may give two the same
-- value; the lists then order those by id (store/members.go).
ALTER TABLE project_members ADD COLUMN join_order bigint NOT NULL DEFAULT 0;
UPDATE project_members m SET join_order = o.n
FROM (SELECT project_id, user_id, row_number() OVER (ORDER BY created_at, xmin::text::bigint, ctid) AS n
      FROM project_members) o
WHERE m.project_id = o.project_id AND m.user_id = o.user_id;
CREATE INDEX project_members_join_order ON project_members(join_order);

-- +goose Down
DROP INDEX project_members_join_order;
ALTER TABLE project_members DROP COLUMN join_order;
