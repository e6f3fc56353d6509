package store

import (
	"context"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Token loads a token of the project by id.
func (r Reader) Token(ctx context.Context, projectID string, id int64) (*model.Token, error) {
	return scanToken(r.queryRow(ctx, `SELECT `+tokenColumns+tokenFrom+` WHERE t.project_id = $1 AND t.id = $2`, projectID, id))
}
