package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Writes on PostgreSQL. Each write is one transaction of its own, run in the caller's
// goroutine on a connection of the writer pool; PostgreSQL's own group commit shares
// the fsyncs of concurrent writes. Nothing is run twice: a write that fails is rolled
// back whole, and its error is its answer.
//
// A round trip costs about as much as a create's INSERT (docs/postgres.md), and the
// statements a write runs besides its own do not need each other's results: they go
// together, in one round trip (a pgx pipeline). Two places: first BEGIN, the
// transaction's id, the project's lock and its last seq (begin); at the end the
// events, the project's seq, the NOTIFY and the COMMIT (commit). They run in order,
// each as if sent alone: a statement that fails leaves the transaction unusable and
// the ones after it are not run.

// writerConns is how many writes one server runs at once on PostgreSQL; more wait for
// a connection. Writes of one project wait for each other anyway (its lock).
const writerConns = 8

// pgTransaction is a write's transaction on PostgreSQL.
type pgTransaction struct {
	conn *sql.Conn
	pool *sql.DB // the writer pool, conn's
	// BEGIN was sent (it may have run); the transaction's id and its backend's pid, as
	// read right after it, for postgres.Outcome.
	begun       bool
	xid         string
	pid         uint32
	reconnected bool // conn replaced one found closed (reconnect)
	// The count of credential changes as the write began (credcache.go).
	credentialsBefore int64
	// The projects whose lock the write holds, each with its last event seq as read
	// under the lock (or notRead), which batch.seqs overrides once the write has
	// numbered events of the project (Tx.projectSeq).
	locked map[string]int64
}

// writePostgres runs j as a transaction of its own and gives its outcome.
func (s *postgresEngine) writePostgres(j *job) error {
	if err := j.ctx.Err(); err != nil {
		return err
	}
	ctx := context.Background() // once begun, a write runs to its end
	start := time.Now()
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		return s.batchError(fmt.Errorf("begin write: %w", err))
	}
	p := &pgTransaction{conn: conn, pool: s.writer, locked: map[string]int64{}}
	defer func() { p.conn.Close() }() // gives the connection back (reconnect may replace it)
	if err := p.begin(ctx, j.by.Project); err != nil {
		p.rollback()
		return s.batchError(err)
	}
	b := &batch{q: p.conn, postgres: p, seqs: map[string]int64{}} // begin may have made the connection again
	t := &Tx{Reader: Reader{q: b.q, sql: postgresSQL}, b: b, by: j.by}
	if err := runJob(j, t); err != nil {
		p.rollback()
		if isDeadlock(err) {
			return errDeadlock // a write's own error is its answer; only a deadlock is told to send again
		}
		return err
	}
	b.events, b.audit = t.events, t.audit
	if hook := s.beforeCommit.Swap(nil); hook != nil {
		(*hook)()
	}
	committing := time.Now()
	if err := s.commitPostgres(ctx, b); err != nil {
		s.tokens.clear() // forget whatever the write may have changed
		var refused notCommitted
		switch {
		case errors.As(err, &refused):
			// PostgreSQL refused a statement before the COMMIT, which did not run.
			p.rollback()
			return s.batchError(refused.err)
		case errors.Is(err, postgres.ErrRolledBack): // as PostgreSQL says (postgres.Outcome): 503
			return err
		}
		// Whether it is stored is unknown: stop (failstop.go).
		s.failStop(fmt.Errorf("commit: %w", err))
		return s.unknownOutcome()
	}
	j.credentialsMoved, j.madeEvents = b.credentialsMoved, len(b.events) > 0
	s.counted(1, start, committing)
	if len(b.events) > 0 && s.opts.OnCommit != nil {
		s.opts.OnCommit(b.events)
	}
	return nil
}

// begin sends BEGIN, reads the transaction's id and backend pid, takes the lock of the
// write's project (postgres_seq.go), reading its last seq under it, and reads the count
// of credential changes: one round trip.
// A write that names no project takes the lock when it appends the project's first
// event (Tx.projectSeq).
func (p *pgTransaction) begin(ctx context.Context, project string) error {
	q := &pgx.Batch{}
	p.begun = true
	q.Queue("BEGIN")
	q.Queue(`SELECT pg_current_xact_id()::text, pg_backend_pid()`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&p.xid, &p.pid)
	})
	last := int64(notRead)
	if project != "" {
		q.Queue(`SELECT pg_advisory_xact_lock($1)`, postgres.ProjectLockKey(project))
		queueProjectSeq(q, project, &last)
	}
	q.Queue(countCredentialChanges).QueryRow(func(row pgx.Row) error { return row.Scan(&p.credentialsBefore) })
	if err := p.sendTogether(ctx, q); err != nil {
		if p.reconnect(ctx) {
			return p.begin(ctx, project)
		}
		return fmt.Errorf("begin a write: %w", err)
	}
	if project != "" {
		p.locked[project] = last
	}
	return nil
}

// holds says whether the write holds the project's lock.
func (p *pgTransaction) holds(projectID string) bool {
	_, ok := p.locked[projectID]
	return ok
}

// rollback ends a failed write's transaction. Should it fail, the pool drops the
// connection, still in the transaction (pgx's ResetSession), and PostgreSQL rolls back
// when the session ends.
func (p *pgTransaction) rollback() {
	if p.begun {
		_, _ = p.conn.ExecContext(context.Background(), "ROLLBACK")
	}
}

// sendTogether runs q's statements in one round trip on the write's connection, and
// calls their result callbacks in order. It returns the first error.
func (p *pgTransaction) sendTogether(ctx context.Context, q *pgx.Batch) error {
	return p.conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("the writer's connection is a %T, not pgx's", driverConn)
		}
		return c.Conn().SendBatch(ctx, q).Close()
	})
}

// queue adds a statement to q.
func queue(q *pgx.Batch, query string, args ...any) *pgx.QueuedQuery {
	return q.Queue(query, pgArgs(args)...)
}

// reconnect replaces the write's connection when its first round trip (begin) found it
// closed: lost while idle, its backend ended or the database restarted. Nothing of the
// write ran on the new connection yet, and nothing can have been stored through the
// old one, which never saw its COMMIT. Once a write.
func (p *pgTransaction) reconnect(ctx context.Context) bool {
	if p.reconnected {
		return false
	}
	closed := false
	_ = p.conn.Raw(func(driverConn any) error {
		if c, ok := driverConn.(*stdlib.Conn); ok && c.Conn().IsClosed() {
			closed = true
			return driver.ErrBadConn // the pool drops it
		}
		return nil
	})
	if !closed {
		return false
	}
	conn, err := p.pool.Conn(ctx)
	if err != nil {
		return false
	}
	p.conn.Close()
	p.conn, p.begun, p.xid, p.reconnected = conn, false, "", true
	return true
}

// notCommitted is a commit whose statements PostgreSQL refused before the COMMIT, which
// therefore did not run; the transaction is still open, and failed.
type notCommitted struct{ err error }

func (e notCommitted) Error() string { return e.err.Error() }

// commitPostgres stores the write's events and the projects' last seq (as flushEvents
// does on SQLite), sends the NOTIFY that wakes the other servers' hubs when (and only
// when) the write commits (postgres.Listener), and commits: one round trip. When the COMMIT
// may have run and its answer is missing, the database is asked whether the write's
// transaction committed (postgres.Outcome).
func (s *postgresEngine) commitPostgres(ctx context.Context, b *batch) error {
	p := b.postgres
	q := &pgx.Batch{}
	answered := 0 // statements after those that succeeded, in order
	counted := func(pgconn.CommandTag) error { answered++; return nil }
	for _, st := range b.eventStatements() {
		queue(q, st.query, st.args...).Exec(counted)
	}
	query, args := postgres.NotifyStatement(b.seqs)
	q.Queue(query, args...).Exec(counted)
	var credentialChanges int64 // for the token cache (credcache.go)
	q.Queue(countCredentialChanges).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&credentialChanges); err != nil {
			return err
		}
		answered++
		return nil
	})
	beforeCommit := q.Len()
	var tag pgconn.CommandTag
	q.Queue("COMMIT").Exec(func(ct pgconn.CommandTag) error { tag = ct; return nil })
	looked := time.Now()
	err := p.sendTogether(ctx, q)
	var refused *pgconn.PgError
	switch {
	case err == nil && tag.String() == "COMMIT":
		s.sawCredentialChanges(credentialChanges, looked)
		// Whether the answer waits is the write's own two reads' to say: the store's
		// last count may already be this one, taken by a request's read since the COMMIT.
		// (A change of another server's in between only makes it wait too.)
		b.credentialsMoved = credentialChanges != p.credentialsBefore
		return nil
	case err == nil: // "ROLLBACK": the transaction had failed
		return postgres.ErrRolledBack
	case errors.As(err, &refused) && answered < beforeCommit:
		// PostgreSQL skips the statements after one it refused, the COMMIT with them.
		if refused.Severity == "FATAL" || refused.Severity == "PANIC" {
			// And it ended the session (its backend was ended, say), which rolled back.
			return postgres.ErrRolledBack
		}
		return notCommitted{fmt.Errorf("store events and notify other servers: %w", err)}
	}
	// Should it have committed after all, the count read may be lost: as if it moved.
	s.tokens.clear()
	b.credentialsMoved = true
	return postgres.Outcome(s.writer, p.xid, p.pid, err)
}

// queueProjectSeq adds the read of a project's last event seq to q: once the write
// holds the project's lock, it stays right until the write stores its own events.
// A project that is not there reads as notRead.
func queueProjectSeq(q *pgx.Batch, projectID string, last *int64) {
	queue(q, `SELECT (SELECT event_seq FROM projects WHERE id = $1)`, projectID).QueryRow(func(row pgx.Row) error {
		var v sql.NullInt64
		if err := row.Scan(&v); err != nil {
			return err
		}
		*last = notRead
		if v.Valid {
			*last = v.Int64
		}
		return nil
	})
}

// notRead is a locked project's seq before the write has read it.
const notRead = -1
