-- Tables standing for agentdesk's (run.sh).
DROP TABLE IF EXISTS t_tasks, t_events, t_projects;
CREATE TABLE t_projects (id text primary key, event_seq bigint not null default 0);
INSERT INTO t_projects VALUES ('p', 0);
CREATE TABLE t_tasks (id bigserial primary key, project_id text, summary text, steps jsonb, created_at text);
CREATE TABLE t_events (id bigserial primary key, project_id text, seq bigint, type text, data jsonb, at text, UNIQUE(project_id, seq));
