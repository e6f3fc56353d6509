package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// ErrDuplicate is returned when a unique name is already taken.
var ErrDuplicate = errors.New("already exists")

// InsertAgent stores a new agent and sets its id.
func (t *Tx) InsertAgent(ctx context.Context, a *model.Agent) error {
	var exists int
	err := t.queryRow(ctx, `SELECT 1 FROM agents WHERE project_id = $1 AND name = $2`, a.ProjectID, a.Name).Scan(&exists)
	if err == nil {
		return ErrDuplicate
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	res, err := t.insert(ctx, `INSERT INTO agents (project_id, name, created_at) VALUES ($1, $2, $3)`,
		a.ProjectID, a.Name, fmtTime(a.CreatedAt))
	if err != nil {
		return err
	}
	a.ID, err = res.LastInsertId()
	return err
}

const agentColumns = `id, project_id, name, display_name, description, created_at, last_seen_at`

func scanAgent(row interface{ Scan(...any) error }) (*model.Agent, error) {
	var a model.Agent
	var created string
	var seen sql.NullString
	err := row.Scan(&a.ID, &a.ProjectID, &a.Name, &a.DisplayName, &a.Description, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt = parseTime(created)
	a.LastSeenAt = parseTimePtr(seen)
	return &a, nil
}

// TouchAgents records when agents were last seen; only ever moves the time forward.
func (t *Tx) TouchAgents(ctx context.Context, seen map[int64]time.Time) error {
	for id, at := range seen {
		if _, err := t.exec(ctx,
			`UPDATE agents SET last_seen_at = $1 WHERE id = $2 AND (last_seen_at IS NULL OR last_seen_at < $3)`,
			fmtTime(at), id, fmtTime(at)); err != nil {
			return err
		}
	}
	return nil
}

// Agent loads an agent of the project by id.
func (r Reader) Agent(ctx context.Context, projectID string, id int64) (*model.Agent, error) {
	return scanAgent(r.queryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE project_id = $1 AND id = $2`, projectID, id))
}

// TaskAgent is Agent, whether the agent is a remote A2A agent (a2a.go), and its
// project's budget (nil: none; Budget): what a new task assigned to it needs, in one
// query.
func (r Reader) TaskAgent(ctx context.Context, projectID string, id int64) (agent *model.Agent, remote bool, budget *model.Budget, err error) {
	var micros sql.NullInt64
	var month sql.NullString
	row := r.queryRow(ctx, `SELECT `+agentColumns+`, EXISTS (SELECT 1 FROM a2a_remote_agents r WHERE r.agent_id = agents.id),
		(SELECT monthly_micros FROM budgets WHERE project_id = $1), (SELECT exceeded_month FROM budgets WHERE project_id = $1)
		FROM agents WHERE project_id = $1 AND id = $2`, projectID, id)
	if agent, err = scanAgent(moreColumns{row, []any{&remote, &micros, &month}}); err != nil {
		return nil, false, nil, err
	}
	if micros.Valid {
		budget = &model.Budget{MonthlyMicros: micros.Int64, ExceededMonth: month.String}
	}
	return agent, remote, budget, nil
}

// moreColumns is a row whose last columns go to more, after those its scanner reads.
type moreColumns struct {
	row  rowScanner
	more []any
}

func (m moreColumns) Scan(dest ...any) error { return m.row.Scan(append(dest, m.more...)...) }

// AgentByName loads an agent of the project by name.
func (r Reader) AgentByName(ctx context.Context, projectID, name string) (*model.Agent, error) {
	return scanAgent(r.queryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE project_id = $1 AND name = $2`, projectID, name))
}

// Agents lists the project's agents by id.
func (r Reader) Agents(ctx context.Context, projectID string) ([]model.Agent, error) {
	return queryList(ctx, r, scanAgent, `SELECT `+agentColumns+` FROM agents WHERE project_id = $1 ORDER BY id`, projectID)
}
