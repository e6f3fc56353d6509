-- +goose Up
-- The activity trail is written by the write that appends the events (issue 42): no
-- read fills it any more. What an older agentdesk had not copied yet is copied now.
INSERT INTO activity (project_id, at, actor_kind, actor, via, action, object_type, object_id, event_seq)
	SELECT e.project_id, e.at, e.actor_kind, e.actor, e.via, e.type,
		IIF(instr(e.type, '.') > 0, substr(e.type, 1, instr(e.type, '.') - 1), e.type), e.object_id, e.seq
	FROM events e JOIN projects p ON p.id = e.project_id
	WHERE e.seq > p.activity_seq ORDER BY e.project_id, e.seq;
UPDATE projects SET activity_seq = event_seq;

-- +goose Down
SELECT 1;
