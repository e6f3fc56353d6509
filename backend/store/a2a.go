package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// A2A (migration 00031): remote agents, the tasks sent to them, and the push
// notification configs of agentdesk's own agents' tasks.

// RemoteAgent is what agentdesk keeps of a remote A2A agent beside its agents row.
type RemoteAgent struct {
	AgentID   int64
	ProjectID string
	CardURL   string
	Card      string // the Agent Card's JSON, as fetched
	// CredentialKind is "", "bearer" or "apikey"; Credential is sent to the agent and
	// never shown.
	CredentialKind, Credential string
	CreatedAt, UpdatedAt       time.Time
}

const remoteAgentColumns = `agent_id, project_id, card_url, card, credential_kind, credential, created_at, updated_at`

func scanRemoteAgent(row rowScanner) (*RemoteAgent, error) {
	var a RemoteAgent
	var created, updated string
	err := row.Scan(&a.AgentID, &a.ProjectID, &a.CardURL, &a.Card, &a.CredentialKind, &a.Credential, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt, a.UpdatedAt = parseTime(created), parseTime(updated)
	return &a, nil
}

// InsertRemoteAgent stores the remote side of an agent that is already inserted.
func (t *Tx) InsertRemoteAgent(ctx context.Context, a *RemoteAgent) error {
	_, err := t.exec(ctx, `INSERT INTO a2a_remote_agents (`+remoteAgentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.AgentID, a.ProjectID, a.CardURL, a.Card, a.CredentialKind, a.Credential, fmtTime(a.CreatedAt), fmtTime(a.UpdatedAt))
	return err
}

// RemoteAgent loads the remote side of an agent of the project; ErrNotFound for an
// agent of agentdesk's own.
func (r Reader) RemoteAgent(ctx context.Context, projectID string, agentID int64) (*RemoteAgent, error) {
	return scanRemoteAgent(r.queryRow(ctx, `SELECT `+remoteAgentColumns+` FROM a2a_remote_agents WHERE project_id = $1 AND agent_id = $2`,
		projectID, agentID))
}

// RemoteAgents lists the project's remote agents by agent id.
func (r Reader) RemoteAgents(ctx context.Context, projectID string) ([]RemoteAgent, error) {
	return queryList(ctx, r, scanRemoteAgent, `SELECT `+remoteAgentColumns+` FROM a2a_remote_agents WHERE project_id = $1 ORDER BY agent_id`, projectID)
}

// RemoteTask is a task assigned to a remote agent, and what its sender knows of it.
type RemoteTask struct {
	TaskID, AgentID int64
	ProjectID       string
	// RemoteTaskID and ContextID name the task at the remote agent ("" until it answered).
	RemoteTaskID, ContextID string
	// Outbox is the message to send next ("" when none waits), OutboxID its messageId.
	Outbox, OutboxID string
	// Follow asks the remote agent again where the task is (it was working when the
	// answer or stream ended).
	Follow bool
	// Seen lists what is applied already: how many parts of each artifact are in the
	// task's conversation ("artifact:ID:N"), and the questions asked ("question:" and
	// the status message's id).
	Seen          []string
	Attempts      int
	NextAttemptAt time.Time
	UpdatedAt     time.Time
}

const remoteTaskColumns = `task_id, agent_id, project_id, remote_task_id, context_id, outbox, outbox_id, follow, seen,
	attempts, next_attempt_at, updated_at`

func scanRemoteTask(row rowScanner) (*RemoteTask, error) {
	var rt RemoteTask
	var follow int64
	var seen, next, updated string
	err := row.Scan(&rt.TaskID, &rt.AgentID, &rt.ProjectID, &rt.RemoteTaskID, &rt.ContextID, &rt.Outbox, &rt.OutboxID,
		&follow, &seen, &rt.Attempts, &next, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(seen), &rt.Seen); err != nil {
		return nil, err
	}
	rt.Follow = follow != 0
	rt.NextAttemptAt, rt.UpdatedAt = parseTime(next), parseTime(updated)
	return &rt, nil
}

// SaveRemoteTask stores a remote task's state, whether or not it was stored before.
func (t *Tx) SaveRemoteTask(ctx context.Context, rt *RemoteTask) error {
	seen, err := json.Marshal(rt.Seen)
	if err != nil {
		return err
	}
	if rt.Seen == nil {
		seen = []byte("[]")
	}
	follow := 0
	if rt.Follow {
		follow = 1
	}
	_, err = t.exec(ctx, `INSERT INTO a2a_remote_tasks (`+remoteTaskColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (task_id) DO UPDATE SET agent_id = excluded.agent_id, remote_task_id = excluded.remote_task_id,
		context_id = excluded.context_id, outbox = excluded.outbox, outbox_id = excluded.outbox_id, follow = excluded.follow,
		seen = excluded.seen, attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at,
		updated_at = excluded.updated_at`,
		rt.TaskID, rt.AgentID, rt.ProjectID, rt.RemoteTaskID, rt.ContextID, rt.Outbox, rt.OutboxID, follow, string(seen),
		rt.Attempts, fmtTime(rt.NextAttemptAt), fmtTime(rt.UpdatedAt))
	return err
}

// DeleteRemoteTask forgets what the sender knows of a task (it is no longer a remote
// agent's, or nothing more is to be sent or asked).
func (t *Tx) DeleteRemoteTask(ctx context.Context, taskID int64) error {
	_, err := t.exec(ctx, `DELETE FROM a2a_remote_tasks WHERE task_id = $1`, taskID)
	return err
}

// RemoteTask loads a remote task of the project.
func (r Reader) RemoteTask(ctx context.Context, projectID string, taskID int64) (*RemoteTask, error) {
	return scanRemoteTask(r.queryRow(ctx, `SELECT `+remoteTaskColumns+` FROM a2a_remote_tasks WHERE project_id = $1 AND task_id = $2`,
		projectID, taskID))
}

// DueRemoteTasks lists the remote tasks of every project with a message to send or a
// state to ask for, whose next attempt is not after now, by next attempt.
func (r Reader) DueRemoteTasks(ctx context.Context, now time.Time) ([]RemoteTask, error) {
	return queryList(ctx, r, scanRemoteTask, `SELECT `+remoteTaskColumns+` FROM a2a_remote_tasks
		WHERE (outbox <> '' OR follow <> 0) AND next_attempt_at <= $1 ORDER BY next_attempt_at, task_id`, fmtTime(now))
}

// PushConfig is an A2A push notification config of a task, with its delivery state
// (as a webhook's: the cursor is the last event seq done with).
type PushConfig struct {
	ID        int64
	ProjectID string
	TaskID    int64
	ConfigID  string
	URL       string
	Token     string
	Auth      string // the config's authentication, JSON; "" without
	Secret    string // whsec_...: signs the deliveries
	Cursor    int64
	Attempts  int
	// FailingSince and NextAttemptAt describe the failures of the event after the cursor.
	FailingSince, NextAttemptAt *time.Time
	CreatedAt                   time.Time
}

const pushConfigColumns = `id, project_id, task_id, config_id, url, token, auth, secret, cursor, attempts, failing_since,
	next_attempt_at, created_at`

func scanPushConfig(row rowScanner) (*PushConfig, error) {
	var c PushConfig
	var failing, next sql.NullString
	var created string
	err := row.Scan(&c.ID, &c.ProjectID, &c.TaskID, &c.ConfigID, &c.URL, &c.Token, &c.Auth, &c.Secret, &c.Cursor,
		&c.Attempts, &failing, &next, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c.FailingSince, c.NextAttemptAt, c.CreatedAt = parseTimePtr(failing), parseTimePtr(next), parseTime(created)
	return &c, nil
}

// PutPushConfig stores a task's push config under its config id: a new one from
// c.Cursor on, or, when the task has one by that id, its new URL, token and
// authentication (its delivery state stays).
func (t *Tx) PutPushConfig(ctx context.Context, c *PushConfig) error {
	_, err := t.exec(ctx, `INSERT INTO a2a_push_configs (project_id, task_id, config_id, url, token, auth, secret, cursor, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (task_id, config_id) DO UPDATE SET url = excluded.url, token = excluded.token, auth = excluded.auth`,
		c.ProjectID, c.TaskID, c.ConfigID, c.URL, c.Token, c.Auth, c.Secret, c.Cursor, fmtTime(c.CreatedAt))
	return err
}

// UpdatePushConfig writes a push config's delivery state.
func (t *Tx) UpdatePushConfig(ctx context.Context, c *PushConfig) error {
	return t.execOne(ctx, `UPDATE a2a_push_configs SET cursor = $1, attempts = $2, failing_since = $3, next_attempt_at = $4 WHERE id = $5`,
		c.Cursor, c.Attempts, fmtTimePtr(c.FailingSince), fmtTimePtr(c.NextAttemptAt), c.ID)
}

// DeletePushConfig removes a task's push config; ErrNotFound when it has none by that id.
func (t *Tx) DeletePushConfig(ctx context.Context, projectID string, taskID int64, configID string) error {
	return t.execOne(ctx, `DELETE FROM a2a_push_configs WHERE project_id = $1 AND task_id = $2 AND config_id = $3`, projectID, taskID, configID)
}

// PushConfig loads a task's push config by its config id.
func (r Reader) PushConfig(ctx context.Context, projectID string, taskID int64, configID string) (*PushConfig, error) {
	return scanPushConfig(r.queryRow(ctx, `SELECT `+pushConfigColumns+` FROM a2a_push_configs
		WHERE project_id = $1 AND task_id = $2 AND config_id = $3`, projectID, taskID, configID))
}

// PushConfigByID loads a push config of any project (the deliverer's).
func (r Reader) PushConfigByID(ctx context.Context, id int64) (*PushConfig, error) {
	return scanPushConfig(r.queryRow(ctx, `SELECT `+pushConfigColumns+` FROM a2a_push_configs WHERE id = $1`, id))
}

// PushConfigs lists a task's push configs by id.
func (r Reader) PushConfigs(ctx context.Context, projectID string, taskID int64) ([]PushConfig, error) {
	return queryList(ctx, r, scanPushConfig, `SELECT `+pushConfigColumns+` FROM a2a_push_configs
		WHERE project_id = $1 AND task_id = $2 ORDER BY id`, projectID, taskID)
}

// DuePushConfigs lists the push configs of every project with events after their
// cursor and no retry set for later than now, by id.
func (r Reader) DuePushConfigs(ctx context.Context, now time.Time) ([]PushConfig, error) {
	return queryList(ctx, r, scanPushConfig, `SELECT `+pushConfigColumns+` FROM a2a_push_configs c
		WHERE c.cursor < (SELECT p.event_seq FROM projects p WHERE p.id = c.project_id)
		AND (c.next_attempt_at IS NULL OR c.next_attempt_at <= $1) ORDER BY c.id`, fmtTime(now))
}
