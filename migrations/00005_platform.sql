-- +goose Up
-- The platform domains: skills (of agents, required by tasks), jobs (scheduled task
-- templates) and their runs, usage metering with a monthly budget, and the activity
-- trail (who did what, to which object, when and through which interface).

CREATE TABLE skills (
    id          INTEGER PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (project_id, name)
);

CREATE TABLE agent_skills (
    agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    skill_id INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
    PRIMARY KEY (agent_id, skill_id)
);
CREATE INDEX agent_skills_skill ON agent_skills(skill_id);

CREATE TABLE task_skills (
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    skill_id INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, skill_id)
);
CREATE INDEX task_skills_skill ON task_skills(skill_id);

CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    cron        TEXT NOT NULL,
    timezone    TEXT NOT NULL,
    summary     TEXT NOT NULL,
    details     TEXT NOT NULL DEFAULT '',
    steps       TEXT NOT NULL DEFAULT '[]',   -- JSON array of step titles
    agent_id    INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    skill_id    INTEGER REFERENCES skills(id) ON DELETE SET NULL,
    catch_up    TEXT NOT NULL CHECK (catch_up IN ('skip', 'run_once')),
    paused      INTEGER NOT NULL DEFAULT 0,
    next_run_at TEXT,                         -- UTC; null while paused
    last_run_at TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (project_id, name)
);
CREATE INDEX jobs_next_run ON jobs(next_run_at) WHERE next_run_at IS NOT NULL;

CREATE TABLE job_runs (
    id            INTEGER PRIMARY KEY,
    job_id        INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    scheduled_for TEXT NOT NULL,
    ran_at        TEXT NOT NULL,
    outcome       TEXT NOT NULL CHECK (outcome IN ('created', 'failed', 'skipped')),
    task_id       INTEGER,                    -- kept when the task is deleted later
    reason        TEXT NOT NULL DEFAULT '',
    trigger       TEXT NOT NULL CHECK (trigger IN ('schedule', 'catch_up', 'manual'))
);
CREATE INDEX job_runs_job ON job_runs(job_id, id);

CREATE TABLE usage_records (
    id            INTEGER PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id      INTEGER,                    -- kept when the agent is deleted
    agent_name    TEXT NOT NULL,
    task_id       INTEGER,
    model         TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_micros   INTEGER NOT NULL,           -- millionths of a US dollar
    day           TEXT NOT NULL,              -- YYYY-MM-DD, UTC
    at            TEXT NOT NULL
);
CREATE INDEX usage_records_project_day ON usage_records(project_id, day);

CREATE TABLE budgets (
    project_id     TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    monthly_micros INTEGER NOT NULL,          -- millionths of a US dollar
    exceeded_month TEXT,                      -- YYYY-MM of the last budget.exceeded event
    updated_at     TEXT NOT NULL
);

CREATE TABLE activity (
    id          INTEGER PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    at          TEXT NOT NULL,
    actor_kind  TEXT NOT NULL,                -- token, owner, agent, job, system
    actor       TEXT NOT NULL,
    via         TEXT NOT NULL,                -- rest, graphql, ui, cli, job, internal
    action      TEXT NOT NULL,                -- the event type, e.g. task.created
    object_type TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    event_seq   INTEGER NOT NULL
);
CREATE INDEX activity_project ON activity(project_id, id);
CREATE INDEX activity_object ON activity(project_id, object_type, object_id, id);
CREATE INDEX activity_at ON activity(at);

-- +goose Down
DROP TABLE activity;
DROP TABLE budgets;
DROP TABLE usage_records;
DROP TABLE job_runs;
DROP TABLE jobs;
DROP TABLE task_skills;
DROP TABLE agent_skills;
DROP TABLE skills;
