package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Authentication reads, on the read pool: a token by its hash (through the token cache,
// credcache.go), or an agent's project secret and the agent in one query. Agents are not
// cached: an agent's callbacks are fewer than the requests made with tokens.

// AgentCredentials is what checking an agent's headers needs: its project's secret, and
// the agent of that name (nil when the project has none of that name).
type AgentCredentials struct {
	Secret string
	Agent  *model.Agent
}

// AgentCredentials loads the project's secret and its agent named name, in one query.
// ErrNotFound: no such project.
func (r Reader) AgentCredentials(ctx context.Context, projectID, name string) (*AgentCredentials, error) {
	var c AgentCredentials
	var id sql.NullInt64
	var agentName, displayName, description, created sql.NullString
	err := r.queryRow(ctx, `SELECT p.token_secret, a.id, a.name, a.display_name, a.description, a.created_at
		FROM projects p LEFT JOIN agents a ON a.project_id = p.id AND a.name = $1
		WHERE p.id = $2`, name, projectID).
		Scan(&c.Secret, &id, &agentName, &displayName, &description, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if id.Valid {
		c.Agent = &model.Agent{ID: id.Int64, ProjectID: projectID, Name: agentName.String,
			DisplayName: displayName.String, Description: description.String, CreatedAt: parseTime(created.String)}
	}
	return &c, nil
}
