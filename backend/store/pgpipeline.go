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

// On PostgreSQL a round trip costs the writer about as much as a create's INSERT
// (docs/postgres.md), and the statements a batch runs besides its writes do not need
// each other's results: the writer sends them together, in one round trip (a pgx
// pipeline), on the connection of the batch's transaction. Two places: with the first
// write, BEGIN, the savepoint, the project lock and the project's last seq
// (beginPostgres); at the end, the events, the projects' seqs, the NOTIFY and the
// COMMIT (commitPostgres). They run in order, each as if sent alone: a statement that
// fails leaves the transaction unusable and the ones after it are not run.

// sendTogether runs q's statements in one round trip inside the batch's transaction,
// and calls their result callbacks in order. It returns the first error.
func (b *batch) sendTogether(ctx context.Context, q *pgx.Batch) error {
	return b.conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("the writer's connection is a %T, not pgx's", driverConn)
		}
		return c.Conn().SendBatch(ctx, q).Close()
	})
}

// queue adds a statement written for both engines to q.
func queue(q *pgx.Batch, query string, args ...any) *pgx.QueuedQuery {
	return q.Queue(postgresText(query), pgArgs(args)...)
}

// open queues the batch's BEGIN, and the read of its transaction's id, unless it was
// sent: they go with the first write's statements (beginPostgres).
func (b *batch) open(q *pgx.Batch) {
	if b.begun {
		return
	}
	b.begun = true
	q.Queue("BEGIN")
	q.Queue(`SELECT pg_current_xact_id()::text`).QueryRow(func(row pgx.Row) error { return row.Scan(&b.xid) })
}

// reconnect replaces the batch's connection when its first round trip (BEGIN and the
// first write's savepoint, beginPostgres) found it closed: lost while idle, its backend
// ended or the database restarted. Nothing of the batch ran on the new connection yet,
// and nothing can have been stored through the old one, which never saw a COMMIT of
// the batch. Once a batch.
func (b *batch) reconnect(ctx context.Context) bool {
	if b.reconnected {
		return false
	}
	closed := false
	_ = b.conn.Raw(func(driverConn any) error {
		if c, ok := driverConn.(*stdlib.Conn); ok && c.Conn().IsClosed() {
			closed = true
			return driver.ErrBadConn // the pool drops it
		}
		return nil
	})
	if !closed {
		return false
	}
	conn, err := b.pool.Conn(ctx)
	if err != nil {
		return false
	}
	b.conn.Close()
	b.conn, b.q, b.begun, b.xid, b.reconnected = conn, conn, false, "", true
	return true
}

// notCommitted is a commit whose statements PostgreSQL refused before the COMMIT, which
// therefore did not run; the transaction is still open, and failed.
type notCommitted struct{ err error }

func (e notCommitted) Error() string { return e.err.Error() }

// commitPostgres stores the batch's events and the projects' last seq (as flushEvents
// does on SQLite), sends the NOTIFY that wakes the other servers' hubs when (and only
// when) the batch commits (pgwake.go), and commits: one round trip. When the COMMIT
// may have run and its answer is missing, the database is asked whether the batch's
// transaction committed (pgoutcome.go).
func (s *Store) commitPostgres(ctx context.Context, b *batch) error {
	if !b.begun {
		return nil // no write ran a statement (their requests had ended): nothing to commit
	}
	q := &pgx.Batch{}
	answered := 0 // statements after those that succeeded, in order
	counted := func(pgconn.CommandTag) error { answered++; return nil }
	for _, st := range b.eventStatements() {
		queue(q, st.query, st.args...).Exec(counted)
	}
	query, args := notifyStatement(b.seqs)
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
	err := b.sendTogether(ctx, q)
	var refused *pgconn.PgError
	switch {
	case err == nil && tag.String() == "COMMIT":
		b.credentialsMoved = s.sawCredentialChanges(credentialChanges, looked)
		return nil
	case err == nil: // "ROLLBACK": the transaction had failed
		return errRolledBack
	case errors.As(err, &refused) && answered < beforeCommit:
		// PostgreSQL skips the statements after one it refused, the COMMIT with them.
		if refused.Severity == "FATAL" || refused.Severity == "PANIC" {
			// And it ended the session (its backend was ended, say), which rolled back.
			return errRolledBack
		}
		return notCommitted{fmt.Errorf("store events and notify other servers: %w", err)}
	}
	b.conn.Close() // postgresOutcome asks on the writer's pool, whose connection this is
	// Should it have committed after all, the count read may be lost: as if it moved.
	s.tokens.clear()
	b.credentialsMoved = true
	return s.postgresOutcome(b.xid, err)
}

// queueProjectSeq adds the read of a project's last event seq to q: once the batch
// holds the project's lock, it stays right until the batch stores its own events.
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

// notRead is a locked project's seq before the batch has read it.
const notRead = -1
