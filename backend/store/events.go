package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// AppendEvent stores an event of the project in this write's transaction, with the
// project's next seq, so that the event exists exactly when the change does.
func (t *Tx) AppendEvent(ctx context.Context, projectID, typ string, data any, at time.Time) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var seq int64
	if err := t.queryRow(ctx,
		`UPDATE projects SET event_seq = event_seq + 1 WHERE id = ? RETURNING event_seq`, projectID).Scan(&seq); err != nil {
		return err
	}
	if _, err := t.exec(ctx,
		`INSERT INTO events (project_id, seq, type, data, at) VALUES (?, ?, ?, ?, ?)`,
		projectID, seq, typ, raw, fmtTime(at)); err != nil {
		return err
	}
	if err := t.recordActivity(ctx, projectID, typ, raw, seq, at); err != nil { // activity.go
		return err
	}
	t.events = append(t.events, model.Event{Seq: seq, Type: typ, ProjectID: projectID, At: at, Data: json.RawMessage(raw)})
	return nil
}

// EventsSince lists a project's events after seq, oldest first, at most limit of them.
func (r Reader) EventsSince(ctx context.Context, projectID string, seq int64, limit int) ([]model.Event, error) {
	rows, err := r.query(ctx,
		`SELECT seq, type, data, at FROM events WHERE project_id = ? AND seq > ? ORDER BY seq`+limitClause(limit),
		projectID, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []model.Event
	for rows.Next() {
		var e model.Event
		var data []byte
		var at string
		if err := rows.Scan(&e.Seq, &e.Type, &data, &at); err != nil {
			return nil, err
		}
		e.ProjectID, e.At, e.Data = projectID, parseTime(at), json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// EventBounds gives the first stored seq of a project (0 when none is stored) and the
// last seq ever written (0 when none was).
func (r Reader) EventBounds(ctx context.Context, projectID string) (first, last int64, err error) {
	err = r.queryRow(ctx,
		`SELECT COALESCE((SELECT MIN(seq) FROM events WHERE project_id = ?), 0), event_seq FROM projects WHERE id = ?`,
		projectID, projectID).Scan(&first, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, ErrNotFound
	}
	return first, last, err
}

// PruneEvents forgets events older than before. Events are appended in time order, so
// the expired ones are the oldest rows: it deletes in rowid order, batch by batch, until
// a batch holds a row that has not expired; no index on the time is needed (one fewer to
// update on every write).
func (t *Tx) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	const batch = 10000
	var total int64
	for {
		res, err := t.exec(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT ?) AND at < ?`, batch, fmtTime(before))
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < batch {
			return total, nil
		}
	}
}
