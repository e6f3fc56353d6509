package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Writes on PostgreSQL: one transaction per write, on a connection of the writer pool.
// PostgreSQL commits concurrent transactions together by itself (its group commit), so
// the store keeps no batch of its own, and a write runs exactly once: when it fails,
// its transaction is rolled back and its caller gets the error.
//
// A write of a project (WritingIn) takes the project's lock first (postgres_seq.go)
// and reads the project's last event seq under it, in the round trip of its BEGIN;
// its events, the project's new seq, the NOTIFY that wakes the other servers and the
// COMMIT go together in one more. The lock gives one seq order per project across
// servers. When the COMMIT's answer is lost, the database is asked what became of the
// transaction (pgoutcome.go).

// writerConns bounds the writes running at once, those waiting for their project's
// lock included.
const writerConns = 16

// writePostgres is Write on PostgreSQL.
func (s *Store) writePostgres(ctx context.Context, fn func(*Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	b := &batch{seqs: map[string]int64{}, locked: map[string]int64{}}
	conn, xid, pid, err := s.beginWrite(ctx, writingIn(ctx), b.locked)
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
			dropConn(conn) // PostgreSQL rolls back as the session ends
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
// (beginPostgres). A connection lost before the write began (while idle in the pool, or
// as the write waited for its project's lock) is replaced once: nothing of the write
// has run.
func (s *Store) beginWrite(ctx context.Context, project string, locked map[string]int64) (conn *sql.Conn, xid string, pid uint32, err error) {
	for attempt := 0; ; attempt++ {
		if conn, err = s.writer.Conn(ctx); err != nil {
			return nil, "", 0, err
		}
		xid, pid, err = beginPostgres(context.WithoutCancel(ctx), conn, project, locked)
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

// beginPostgres begins the write's transaction on conn and reads its id and the
// session's backend pid (for pgoutcome.go); for a write of a project, it takes the
// project's lock and reads its last seq into locked. One round trip.
func beginPostgres(ctx context.Context, conn *sql.Conn, project string, locked map[string]int64) (xid string, pid uint32, err error) {
	q := &pgx.Batch{}
	q.Queue("BEGIN")
	q.Queue(`SELECT pg_current_xact_id()::text, pg_backend_pid()`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&xid, &pid)
	})
	if project != "" {
		q.Queue(`SELECT pg_advisory_xact_lock($1)`, projectLockKey(project))
		last := int64(notRead)
		q.Queue(postgresText(`SELECT (SELECT event_seq FROM projects WHERE id = ?)`), project).QueryRow(func(row pgx.Row) error {
			var v sql.NullInt64
			if err := row.Scan(&v); err != nil {
				return err
			}
			if v.Valid {
				last = v.Int64
			}
			locked[project] = last
			return nil
		})
	}
	return xid, pid, pipeline(ctx, conn, q)
}

// notRead is a locked project's seq before the write has read it (the project is not
// there, or the lock was taken by Tx.lockProject).
const notRead = -1

// commitPostgres stores the write's events and the projects' last seq (as flushEvents
// does on SQLite), sends the NOTIFY that wakes the other servers' hubs when (and only
// when) it commits (pgwake.go), and commits: one round trip. When the COMMIT may have
// run and its answer is missing, the database is asked whether the transaction
// committed (pgoutcome.go).
func (s *Store) commitPostgres(ctx context.Context, conn *sql.Conn, b *batch, xid string, pid uint32) error {
	q := &pgx.Batch{}
	answered := 0 // statements before the COMMIT that succeeded, in order
	counted := func(pgconn.CommandTag) error { answered++; return nil }
	for _, st := range b.eventStatements() {
		q.Queue(postgresText(st.query), pgArgs(st.args)...).Exec(counted)
	}
	if len(b.seqs) > 0 {
		query, args := notifyStatement(b.seqs)
		q.Queue(query, args...).Exec(counted)
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
