package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
)

// ConversationID resolves a conversation reference of the project, its integer id or its
// uuid, to the integer id.
func (r Reader) ConversationID(ctx context.Context, projectID, ref string) (int64, error) {
	var id int64
	var err error
	if n, convErr := strconv.ParseInt(ref, 10, 64); convErr == nil {
		err = r.q.QueryRowContext(ctx, `SELECT id FROM conversations WHERE project_id = ? AND id = ?`, projectID, n).Scan(&id)
	} else {
		err = r.q.QueryRowContext(ctx, `SELECT id FROM conversations WHERE project_id = ? AND uuid = ?`, projectID, ref).Scan(&id)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return id, err
}
