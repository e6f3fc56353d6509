package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Writes on PostgreSQL: one transaction per write, on a connection of the writer pool.
// PostgreSQL commits concurrent transactions together by itself (its group commit), so
// the store keeps no batch of its own, and a write runs exactly once: when it fails,
// its transaction is rolled back and its caller gets the error.
//
// A write of a project (WriteIn) takes the project's lock with its BEGIN, in one round
// trip (postgres_seq.go): the project's writes run one at a time. Its events are
// numbered as it commits: one statement per project advances the project's seq, which
// locks the project's row to the commit (even for a write that named no project), and
// stores the events after the seq it had and their activity rows
// (appendEventsStatement). It goes with the NOTIFY that wakes the other servers and the
// COMMIT, in one round trip. So the next write of the project, on any server, numbers
// its events after this one's are visible: every server sees one seq order.
// When the COMMIT's answer is lost, the database is asked what became of the
// transaction (pgoutcome.go).

// writerConns bounds the writes running at once, those waiting for their project's
// lock included.
const writerConns = 16

// writePostgres is Write on PostgreSQL.
func (s *Store) writePostgres(ctx context.Context, project string, fn func(*Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	b := &batch{seqs: map[string]int64{}}
	conn, xid, pid, err := s.beginWrite(ctx, project)
	if err != nil {
		return s.batchError(fmt.Errorf("begin write: %w", err))
	}
	defer conn.Close()
	b.q = conn
	// Once begun, the write completes or fails as a whole, whatever becomes of its request.
	ctx = context.WithoutCancel(ctx)
	t := &Tx{Reader: Reader{q: conn, batch: &batchStmts{}, pg: true}, b: b}
	if err := runJob(fn, t); err != nil {
		if _, rbErr := conn.ExecContext(ctx, "ROLLBACK"); rbErr != nil {
			dropConn(conn)
			return errRolledBack // the session is gone, and its transaction with it
		}
		if isDeadlock(err) {
			return errDeadlock
		}
		return err
	}
	b.events, b.audit = t.events, t.audit
	if hook := s.beforeCommit.Swap(nil); hook != nil {
		(*hook)(pid)
	}
	committing := time.Now()
	if err := s.commitPostgres(ctx, conn, b, xid, pid); err != nil {
		return err
	}
	commitTook := time.Since(committing)
	s.execNanos.Add(int64(committing.Sub(start)))
	s.commitNanos.Add(int64(commitTook))
	if s.opts.OnBatch != nil {
		s.opts.OnBatch(1, commitTook)
	}
	s.batches.Add(1)
	s.writes.Add(1)
	if len(b.events) > 0 && s.opts.OnCommit != nil {
		s.opts.OnCommit(b.events)
	}
	return nil
}

// beginWrite takes a connection of the writer pool and begins a write of project on it
// (beginPostgres). A connection lost before the write began (while idle in the pool,
// or as the write waited for its project's lock) is replaced once: nothing of the
// write has run.
func (s *Store) beginWrite(ctx context.Context, project string) (conn *sql.Conn, xid string, pid uint32, err error) {
	for attempt := 0; ; attempt++ {
		if conn, err = s.writer.Conn(ctx); err != nil {
			return nil, "", 0, err
		}
		xid, pid, err = beginPostgres(context.WithoutCancel(ctx), conn, project)
		if err == nil {
			return conn, xid, pid, nil
		}
		dropConn(conn) // its transaction may be open, or the connection broken
		conn.Close()
		var refused *pgconn.PgError
		if attempt > 0 || (errors.As(err, &refused) && refused.Severity != "FATAL") {
			return nil, "", 0, err
		}
	}
}

// beginPostgres begins the write's transaction on conn, reads its id and the session's
// backend pid (for pgoutcome.go), and takes the project's lock unless project is "":
// one round trip.
func beginPostgres(ctx context.Context, conn *sql.Conn, project string) (xid string, pid uint32, err error) {
	q := &pgx.Batch{}
	q.Queue("BEGIN")
	q.Queue(`SELECT pg_current_xact_id()::text, pg_backend_pid()`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&xid, &pid)
	})
	if project != "" {
		q.Queue(`SELECT pg_advisory_xact_lock($1)`, projectLockKey(project))
	}
	return xid, pid, pipeline(ctx, conn, q)
}

// commitPostgres numbers and stores the write's events with their activity rows, sends
// the NOTIFY that wakes the other servers' hubs when (and only when) it commits
// (pgwake.go), and commits: one round trip. When the COMMIT may have run and its
// answer is missing, the database is asked whether the transaction committed
// (pgoutcome.go).
func (s *Store) commitPostgres(ctx context.Context, conn *sql.Conn, b *batch, xid string, pid uint32) error {
	q := &pgx.Batch{}
	answered := 0 // statements before the COMMIT that succeeded, in order
	for _, project := range projectsOf(b.events) {
		var types, at, actorKinds, actors, vias, objectIDs []string
		var data [][]byte
		var numbered []*model.Event
		for i := range b.events {
			if e, a := &b.events[i], b.audit[i]; e.ProjectID == project {
				types, at, data = append(types, e.Type), append(at, fmtTime(e.At)), append(data, []byte(e.Data.(json.RawMessage)))
				actorKinds, actors, vias, objectIDs = append(actorKinds, a.actorKind), append(actors, a.actor), append(vias, a.via), append(objectIDs, a.objectID)
				numbered = append(numbered, e)
			}
		}
		q.Queue(appendEventsStatement, project, types, data, at, actorKinds, actors, vias, objectIDs, wakeChannel).QueryRow(func(row pgx.Row) error {
			var last int64
			if err := row.Scan(&last, nil); err != nil {
				return err
			}
			answered++
			for i, e := range numbered {
				e.Seq = last - int64(len(numbered)) + int64(i) + 1
			}
			return nil
		})
	}
	beforeCommit := q.Len()
	var tag pgconn.CommandTag
	q.Queue("COMMIT").Exec(func(ct pgconn.CommandTag) error { tag = ct; return nil })
	err := pipeline(ctx, conn, q)
	var refused *pgconn.PgError
	switch {
	case err == nil && tag.String() == "COMMIT":
		return nil
	case err == nil: // "ROLLBACK": the transaction had failed
		return errRolledBack
	case errors.As(err, &refused) && answered < beforeCommit:
		// PostgreSQL skips the statements after one it refused, the COMMIT with them.
		dropConn(conn)
		if refused.Severity == "FATAL" || refused.Severity == "PANIC" {
			return errRolledBack // and it ended the session, which rolled back
		}
		return s.batchError(fmt.Errorf("store events and notify other servers: %w", err))
	}
	dropConn(conn)
	return s.postgresOutcome(xid, pid, err)
}

// projectsOf lists the projects of events, sorted: two writes lock the rows of the
// projects they both append events to in the same order, and never deadlock there.
func projectsOf(events []model.Event) []string {
	var out []string
	for _, e := range events {
		if !slices.Contains(out, e.ProjectID) {
			out = append(out, e.ProjectID)
		}
	}
	slices.Sort(out)
	return out
}

// appendEventsStatement stores a write's events of project $1 (their types, data, times,
// actors' kinds and names, interfaces and objects' ids, in order: $2 to $8) after the
// project's last seq, which it advances, and their activity rows; it notifies channel
// $9 of the project's new last seq, which it returns. An unknown project has no row to
// advance: the division by zero refuses the write.
const appendEventsStatement = `WITH p AS (
	UPDATE projects SET event_seq = event_seq + cardinality($2::text[]), activity_seq = event_seq + cardinality($2::text[])
	WHERE id = $1 RETURNING event_seq),
e AS (
	INSERT INTO events (project_id, seq, type, data, at, actor_kind, actor, via, object_id)
	SELECT $1, p.event_seq - cardinality($2::text[]) + r.n, r.type, r.data, r.at, r.actor_kind, r.actor, r.via, r.object_id
	FROM p, unnest($2::text[], $3::bytea[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
		WITH ORDINALITY AS r(type, data, at, actor_kind, actor, via, object_id, n)
	RETURNING project_id, seq, type, at, actor_kind, actor, via, object_id),
a AS (
	INSERT INTO activity (project_id, at, actor_kind, actor, via, action, object_type, object_id, event_seq)
	SELECT project_id, at, actor_kind, actor, via, type, split_part(type, '.', 1), object_id, seq FROM e)
SELECT (SELECT event_seq FROM p) + 0 / (SELECT count(*) FROM p)::int,
	pg_notify($9, $1 || ':' || (SELECT event_seq FROM p))`

// pipeline runs q's statements in one round trip on conn (a pgx pipeline), in order,
// each as if sent alone, and calls their result callbacks. It returns the first error;
// a statement that fails leaves an open transaction unusable, and the ones after it
// do not run.
func pipeline(ctx context.Context, conn *sql.Conn, q *pgx.Batch) error {
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("the writer's connection is a %T, not pgx's", driverConn)
		}
		return c.Conn().SendBatch(ctx, q).Close()
	})
}

// dropConn makes the pool close conn rather than reuse it: its session ends, which
// rolls back a transaction left open on it.
func dropConn(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}
