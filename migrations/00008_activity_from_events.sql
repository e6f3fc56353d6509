-- +goose Up
-- The activity trail is filled from the event log in the background, in bulk, rather
-- than beside every event row in the same transaction (store.IndexActivity): a batch of
-- writes then updates the two B-trees of the events instead of five, and the activity
-- gets its rows many at a time, in one INSERT ... SELECT. Each event keeps who made it,
-- through which interface and the id of its object; projects.activity_seq is how far
-- the activity has been filled.
ALTER TABLE events ADD COLUMN actor_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN actor TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN via TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN object_id TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN activity_seq INTEGER NOT NULL DEFAULT 0;
-- Until now every event got its activity entry as it was written.
UPDATE projects SET activity_seq = event_seq;

-- +goose Down
-- The events not in the activity yet are copied first: the older schema reads it alone.
INSERT INTO activity (project_id, at, actor_kind, actor, via, action, object_type, object_id, event_seq)
SELECT e.project_id, e.at, e.actor_kind, e.actor, e.via, e.type,
       IIF(instr(e.type, '.') > 0, substr(e.type, 1, instr(e.type, '.') - 1), e.type), e.object_id, e.seq
FROM events e JOIN projects p ON p.id = e.project_id
WHERE e.seq > p.activity_seq ORDER BY e.project_id, e.seq;
ALTER TABLE projects DROP COLUMN activity_seq;
ALTER TABLE events DROP COLUMN object_id;
ALTER TABLE events DROP COLUMN via;
ALTER TABLE events DROP COLUMN actor;
ALTER TABLE events DROP COLUMN actor_kind;
