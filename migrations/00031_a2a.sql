-- +goose Up
-- A2A (issue 41, part 2). A remote A2A agent is an agent of the project (a row of
-- agents, so that tasks are assigned to it as to any agent) with this row beside it:
-- where its Agent Card was fetched, the card as fetched, and the credential agentdesk
-- sends it. The credential is sent, so it is kept as given (like a webhook's secret),
-- and never shown again.
CREATE TABLE a2a_remote_agents (
    agent_id        INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    card_url        TEXT NOT NULL,
    card            TEXT NOT NULL,              -- the Agent Card's JSON, as fetched
    credential_kind TEXT NOT NULL DEFAULT '',   -- '', 'bearer' or 'apikey'
    credential      TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX a2a_remote_agents_project ON a2a_remote_agents(project_id);

-- A task assigned to a remote agent: its id there, and the sender's state. outbox is
-- the message to send it next (the request, then each answer), '' when none waits;
-- follow asks the remote agent again where the task is (its stream ended while it
-- worked). seen lists what is applied already: the parts of each artifact in the
-- conversation, the questions asked (JSON array of strings).
CREATE TABLE a2a_remote_tasks (
    task_id         INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    agent_id        INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    remote_task_id  TEXT NOT NULL DEFAULT '',
    context_id      TEXT NOT NULL DEFAULT '',
    outbox          TEXT NOT NULL DEFAULT '',
    outbox_id       TEXT NOT NULL DEFAULT '',
    follow          INTEGER NOT NULL DEFAULT 0,
    seen            TEXT NOT NULL DEFAULT '[]',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    updated_at      TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX a2a_remote_tasks_due ON a2a_remote_tasks(next_attempt_at);

-- A2A push notification configs of agentdesk's agents' tasks: each is sent the task
-- each time it changes, by the webhook machinery, with a cursor of its own on the
-- project's event log (as a webhook has) and the same failure state.
CREATE TABLE a2a_push_configs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    task_id         INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    config_id       TEXT NOT NULL,
    url             TEXT NOT NULL,
    token           TEXT NOT NULL DEFAULT '',
    auth            TEXT NOT NULL DEFAULT '',   -- the config's authentication (JSON), '' without
    secret          TEXT NOT NULL,              -- whsec_...: signs its deliveries
    cursor          INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    failing_since   TEXT,
    next_attempt_at TEXT,
    created_at      TEXT NOT NULL,
    UNIQUE (task_id, config_id)
);
CREATE INDEX a2a_push_configs_project ON a2a_push_configs(project_id);

-- +goose Down
DROP TABLE a2a_push_configs;
DROP TABLE a2a_remote_tasks;
DROP TABLE a2a_remote_agents;
