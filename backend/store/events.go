package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// AppendEvent records an event of the project in this write, with who made it (from the
// context: the principal and the interface) and the id of its object, for the activity
// trail (activity.go). It is stored in the write's transaction, so that it exists
// exactly when the change does, with the project's next seq: on SQLite numbered now,
// the project's seq kept in memory during the batch, and the rows written when the
// batch commits, all of a batch's events in one statement; on PostgreSQL numbered as
// the write commits them (pgwrite.go).
func (t *Tx) AppendEvent(ctx context.Context, projectID, typ string, data any, at time.Time) error {
	var raw []byte
	var err error
	if v, ok := data.(jsonAppender); ok { // most events carry a task (model.TaskEvent)
		raw, err = v.AppendJSON(make([]byte, 0, 1024))
	} else {
		raw, err = json.Marshal(data)
	}
	if err != nil {
		return err
	}
	var seq int64
	if !t.pg {
		if seq, err = t.nextSeq(ctx, projectID); err != nil {
			return err
		}
	}
	t.events = append(t.events, model.Event{Seq: seq, Type: typ, ProjectID: projectID, At: at, Data: json.RawMessage(raw)})
	t.audit = append(t.audit, auditOf(ctx, raw)) // activity.go
	return nil
}

// jsonAppender is data that encodes itself faster than encoding/json does
// (model/taskjson.go).
type jsonAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// nextSeq numbers the project's next event. The first event of a project in a batch
// reads the project's last seq; the following ones count on from there in memory.
func (t *Tx) nextSeq(ctx context.Context, projectID string) (int64, error) {
	last, err := t.projectSeq(ctx, projectID)
	if err != nil {
		return 0, err
	}
	t.b.seqs[projectID] = last + 1
	return last + 1, nil
}

// projectSeq is the project's last event seq as this write sees it: the last stored,
// and after it the events its batch numbered (SQLite) or this write appended
// (PostgreSQL, where they are numbered as it commits; the project's row stays locked
// from this read to the commit, so that no other write's events come between).
func (t *Tx) projectSeq(ctx context.Context, projectID string) (int64, error) {
	if last, ok := t.b.seqs[projectID]; ok {
		return last, nil
	}
	var last int64
	if err := t.queryRow(ctx, lastProjectSeq, projectID).Scan(&last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("event of unknown project %q: %w", projectID, ErrNotFound)
		}
		return 0, err
	}
	for _, e := range t.events {
		if e.ProjectID == projectID {
			last++
		}
	}
	return last, nil
}

var lastProjectSeq = postgresSQL(`SELECT event_seq FROM projects WHERE id = ?`,
	`SELECT event_seq FROM projects WHERE id = $1 FOR NO KEY UPDATE`)

// flushEvents writes the batch's events and the projects' last seq, before the batch
// commits. (PostgreSQL sends the same statements with its COMMIT: pgwrite.go.)
func (b *batch) flushEvents(ctx context.Context) error {
	r := Reader{q: b.q, batch: b.stmts}
	for _, st := range b.eventStatements() {
		if _, err := r.exec(ctx, st.query, st.args...); err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
	}
	return nil
}

// statement is one statement to run, with what it does for an error message.
type statement struct {
	what, query string
	args        []any
}

// eventStatements are the statements that store the batch's events, copy them into the
// activity trail (activity.go), and advance the projects' last seq.
func (b *batch) eventStatements() []statement {
	var out []statement
	firstSeq := map[string]int64{}
	for start := 0; start < len(b.events); start += maxRowsPerInsert {
		end := min(start+maxRowsPerInsert, len(b.events))
		args := make([]any, 0, 9*(end-start))
		for i := start; i < end; i++ {
			e, a := b.events[i], b.audit[i]
			if _, ok := firstSeq[e.ProjectID]; !ok {
				firstSeq[e.ProjectID] = e.Seq
			}
			args = append(args, e.ProjectID, e.Seq, e.Type, []byte(e.Data.(json.RawMessage)), fmtTime(e.At), a.actorKind, a.actor, a.via, a.objectID)
		}
		out = append(out, statement{"store events", insertRows(`INSERT INTO events (project_id, seq, type, data, at, actor_kind, actor, via, object_id) VALUES `, 9, end-start), args})
	}
	for projectID, seq := range b.seqs {
		out = append(out,
			statement{"store activity", copyActivity, []any{projectID, firstSeq[projectID] - 1, seq}},
			statement{"store event seq", `UPDATE projects SET event_seq = ?, activity_seq = ? WHERE id = ?`, []any{seq, seq, projectID}})
	}
	return out
}

// maxRowsPerInsert bounds a multi-row INSERT (and so the distinct statements prepared).
const maxRowsPerInsert = 32

// insertRows completes an INSERT ... VALUES with rows groups of n placeholders.
func insertRows(insert string, n, rows int) string {
	group := "(?" + strings.Repeat(", ?", n-1) + ")"
	var sb strings.Builder
	sb.Grow(len(insert) + rows*(len(group)+2))
	sb.WriteString(insert)
	for i := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(group)
	}
	return sb.String()
}

// EventsSince lists a project's events after seq, oldest first, at most limit of them.
// On the read pool it stops before events whose fsync is under way (durable.go).
func (r Reader) EventsSince(ctx context.Context, projectID string, seq int64, limit int) ([]model.Event, error) {
	upTo := int64(math.MaxInt64)
	if r.horizon != nil {
		if last, capped := r.horizon.limit(projectID); capped {
			upTo = last
		}
	}
	rows, err := r.query(ctx,
		`SELECT seq, type, data, at FROM events WHERE project_id = ? AND seq > ? AND seq <= ? ORDER BY seq`+limitClause(limit),
		projectID, seq, upTo)
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
	if r.horizon != nil {
		if durable, capped := r.horizon.limit(projectID); capped {
			last = min(last, durable)
		}
	}
	return first, last, err
}

// PruneEvents forgets events older than before, in one transaction: PruneEventsBatch
// until a batch is not full. The server's hourly pass does not use it (a million
// expired events held the writer for many seconds); events.Hub.PruneEvents writes one
// batch a transaction.
func (t *Tx) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	const batch = 10000
	var total int64
	for {
		n, err := t.PruneEventsBatch(ctx, before, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}

// PruneEventsBatch forgets the events older than before among the oldest limit ones, and
// says how many went: fewer than limit means the expired ones are done. Events are
// appended in time order, so the expired ones are the oldest rows: it deletes in rowid
// order and no index on the time is needed (one fewer to update on every write). Each
// event is in the activity trail since the write that appended it.
func (t *Tx) PruneEventsBatch(ctx context.Context, before time.Time, limit int) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT ?) AND at < ?`, limit, fmtTime(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
