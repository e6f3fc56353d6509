package postgres

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// A COMMIT that fails on PostgreSQL. The usual cause is a lost connection: the COMMIT
// may not have reached the server, or it did and the answer was lost. SQLite's answer
// to an unknown outcome is to stop taking writes (the store's failstop.go); PostgreSQL can say what
// happened. The write asks about its transaction on another connection of the writer
// pool (the transaction's id was read right after its BEGIN: the store's pgwrite.go): committed, the
// write is acknowledged as if the COMMIT had answered; rolled back, it is told that
// nothing was saved and to send it again. Still in progress (the old connection's
// backend does not know yet that its client is gone), the write ends that backend,
// which then commits or rolls back.
// Unknown after outcomeTimeout (the database unreachable), the store stops as SQLite's
// does.

// outcomeTimeout bounds how long a write keeps asking.
const outcomeTimeout = 30 * time.Second

// ErrRolledBack answers a write whose COMMIT failed and that PostgreSQL rolled back.
var ErrRolledBack = errs.Unavailable("the connection to the database was lost as this change was committed, " +
	"and the database rolled it back: nothing of it was saved; send it again")

// Outcome says what became of transaction xid, begun by backend pid, after its
// COMMIT failed with commitErr: nil when it committed, ErrRolledBack when it did not,
// commitErr when that cannot be known.
func Outcome(writer *sql.DB, xid string, pid uint32, commitErr error) error {
	if xid == "" {
		return commitErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
	defer cancel()
	for ended := false; ; {
		var status sql.NullString
		err := writer.QueryRowContext(ctx, `SELECT pg_xact_status($1::xid8)`, xid).Scan(&status)
		switch {
		case err == nil && status.String == "committed":
			slog.Warn("a COMMIT failed, but the database committed the write: it is acknowledged", "err", commitErr)
			return nil
		case err == nil && status.String == "aborted":
			slog.Warn("a COMMIT failed and the database rolled the write back: it is told to send again", "err", commitErr)
			return ErrRolledBack
		case err == nil && !status.Valid: // an id the database does not know
			return commitErr
		case err == nil && status.String == "in progress" && !ended:
			// The old backend still holds the transaction open: end it.
			_, err = writer.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, int64(pid))
			ended = err == nil
		}
		select {
		case <-ctx.Done():
			return commitErr
		case <-time.After(100 * time.Millisecond):
		}
	}
}
