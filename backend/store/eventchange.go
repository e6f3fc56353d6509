package store

import (
	"context"
	"database/sql"
	"errors"
)

// EventAndPrevious returns the data of event seq of the project and of the latest
// earlier event about the same object (same object id, type starting with
// objectType + "."), looking back at most lookBack events; nil for either when it is
// pruned or there is none. The activity trail uses them to say what a change changed.
func (r Reader) EventAndPrevious(ctx context.Context, projectID string, seq int64, objectType, objectID string, lookBack int64) (cur, prev []byte, err error) {
	err = r.queryRow(ctx, `SELECT data FROM events WHERE project_id = $1 AND seq = $2`, projectID, seq).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	err = r.queryRow(ctx, `SELECT data FROM events WHERE project_id = $1 AND seq < $2 AND seq >= $3 AND object_id = $4 AND type LIKE $5 || '.%'
		ORDER BY seq DESC LIMIT 1`, projectID, seq, seq-lookBack, objectID, objectType).Scan(&prev)
	if errors.Is(err, sql.ErrNoRows) {
		return cur, nil, nil
	}
	return cur, prev, err
}
