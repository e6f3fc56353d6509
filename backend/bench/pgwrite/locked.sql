BEGIN;
SELECT pg_advisory_xact_lock(42);
SELECT event_seq FROM t_projects WHERE id = 'p';
SELECT 1 FROM t_projects WHERE id = 'p';
INSERT INTO t_tasks (project_id, summary, steps, created_at) VALUES ('p', 'a task', '[{"t":"a"},{"t":"b"},{"t":"c"}]', '2026') RETURNING id;
UPDATE t_projects SET event_seq = event_seq + 1 WHERE id = 'p' RETURNING event_seq;
INSERT INTO t_events (project_id, seq, type, data, at) SELECT 'p', event_seq, 'task.created', '{"id":1}', '2026' FROM t_projects WHERE id = 'p';
SELECT pg_notify('agentdesk', 'p');
COMMIT;
