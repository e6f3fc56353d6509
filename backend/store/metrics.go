package store

import (
	"context"
	"database/sql"
	"time"
)

// QueueDepth is how many writes wait for the writer (the metrics' gauge).
func (s *Store) QueueDepth() int { return s.eng.queued() }

// OldestUndelivered is the time of the oldest event an enabled webhook has still to be
// sent (the first after its cursor); ok is false when every webhook is up to date.
func (r Reader) OldestUndelivered(ctx context.Context) (at time.Time, ok bool, err error) {
	var s sql.NullString
	err = r.queryRow(ctx, `SELECT MIN((SELECT e.at FROM events e
		WHERE e.project_id = w.project_id AND e.seq > w.cursor ORDER BY e.seq LIMIT 1))
		FROM webhooks w WHERE w.enabled = 1`).Scan(&s)
	if err != nil || !s.Valid {
		return time.Time{}, false, err
	}
	return parseTime(s.String), true, nil
}
