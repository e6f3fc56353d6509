package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Authentication reads the database on every request, on the read pool: a token by its
// hash, or an agent's project secret and the agent in one query. Nothing is cached, so a
// token revoked or an agent deleted, by this process or another (the CLI), stops working
// with the next request. (A cache here once needed a check for other processes' commits
// before each read, which cost as much as the query it saved: docs/performance.md.)

// TokenByHash finds a token by the SHA-256 of its value.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*model.Token, error) {
	return s.Read().TokenByHash(ctx, hash)
}

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
		FROM projects p LEFT JOIN agents a ON a.project_id = p.id AND a.name = ?
		WHERE p.id = ?`, name, projectID).
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
