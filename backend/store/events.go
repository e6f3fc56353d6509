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

// AppendEvent records an event of the project in this write, with the project's next
// seq, who made it (from the context: the principal and the interface) and the id of
// its object, which the activity trail is filled from (activity.go). It is stored in the write's transaction,
// so that it exists exactly when the change does.
//
// The rows are written when the batch commits, all of a batch's events in one statement,
// and the project's seq is kept in memory during the batch.
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
	seq, err := t.nextSeq(ctx, projectID)
	if err != nil {
		return err
	}
	t.events = append(t.events, model.Event{Seq: seq, Type: typ, ProjectID: projectID, At: at, Data: json.RawMessage(raw)})
	t.audit = append(t.audit, auditOf(t.by.Actor, raw)) // activity.go
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

// projectSeq is the project's last event seq as this batch sees it. On PostgreSQL it
// is read under the project's lock (postgres_seq.go), which the batch keeps to its
// commit: no other server's batch numbers events of the project meanwhile.
func (t *Tx) projectSeq(ctx context.Context, projectID string) (int64, error) {
	if last, ok := t.b.seqs[projectID]; ok {
		return last, nil
	}
	if p := t.b.postgres; p != nil {
		if last, ok := p.locked[projectID]; ok && last != notRead {
			return last, nil // read with the lock (pgTransaction.begin)
		}
	}
	if err := t.lockProject(ctx, projectID); err != nil {
		return 0, err
	}
	var last int64
	if err := t.queryRow(ctx, `SELECT event_seq FROM projects WHERE id = $1`, projectID).Scan(&last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("event of unknown project %q: %w", projectID, ErrNotFound)
		}
		return 0, err
	}
	return last, nil
}

// flushEvents writes the batch's events and the projects' last seq, before the batch
// commits. (PostgreSQL sends the same statements with its COMMIT: commitPostgres.)
func (b *batch) flushEvents(ctx context.Context) error {
	r := Reader{q: b.q, batch: b.stmts, sql: sqliteSQL}
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

// eventStatements are the statements that store the batch's events and advance the
// projects' last seq.
func (b *batch) eventStatements() []statement {
	var out []statement
	for start := 0; start < len(b.events); start += maxRowsPerInsert {
		end := min(start+maxRowsPerInsert, len(b.events))
		args := make([]any, 0, 9*(end-start))
		for i := start; i < end; i++ {
			e, a := b.events[i], b.audit[i]
			args = append(args, e.ProjectID, e.Seq, e.Type, []byte(e.Data.(json.RawMessage)), fmtTime(e.At), a.actorKind, a.actor, a.via, a.objectID)
		}
		out = append(out, statement{"store events", insertRows(`INSERT INTO events (project_id, seq, type, data, at, actor_kind, actor, via, object_id) VALUES `, 9, end-start), args})
	}
	for projectID, seq := range b.seqs {
		out = append(out, statement{"store event seq", `UPDATE projects SET event_seq = $1 WHERE id = $2`, []any{seq, projectID}})
	}
	return out
}

// maxRowsPerInsert bounds a multi-row INSERT (and so the distinct statements prepared).
const maxRowsPerInsert = 32

// insertRows completes an INSERT ... VALUES with rows groups of n placeholders.
func insertRows(insert string, n, rows int) string {
	var sb strings.Builder
	sb.WriteString(insert)
	for i := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(" + params(i*n+1, n) + ")")
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
		`SELECT seq, type, data, at FROM events WHERE project_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`+limitClause(limit),
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
		`SELECT COALESCE((SELECT MIN(seq) FROM events WHERE project_id = $1), 0), event_seq FROM projects WHERE id = $2`,
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
// order and no index on the time is needed (one fewer to update on every write).
//
// The activity trail is filled from the events first: none goes before it is copied.
func (t *Tx) PruneEventsBatch(ctx context.Context, before time.Time, limit int) (int64, error) {
	if _, err := t.IndexActivity(ctx, 0); err != nil { // activity.go
		return 0, err
	}
	res, err := t.exec(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT $1) AND at < $2`, limit, fmtTime(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
