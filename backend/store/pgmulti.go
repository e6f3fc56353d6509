package store

import (
	"context"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
)

// Several servers on one PostgreSQL database (issue 21): how a Store learns of the other
// servers' commits (postgres.Listener), runs a due job once (pgjobs.go), and
// sends a webhook's events from one server at a time.

// startListener starts the Store's listener: another server's commit (its NOTIFY, sent
// by writeBatch) calls Options.OnForeign, as this server's own commits call OnCommit.
// This server's own notifications are skipped by the writer connections' backend pids.
func (s *postgresEngine) startListener(ctx context.Context, rawURL string) error {
	foreign := func() {
		if s.opts.OnForeign != nil {
			s.opts.OnForeign()
		}
	}
	l, err := postgres.StartListener(context.WithoutCancel(ctx), rawURL, postgres.ListenerOptions{
		OnEvent: func(string, int64) { foreign() },
		Resync:  foreign,
		Skip:    s.writerPIDs.Has,
	})
	if err != nil {
		return err
	}
	s.listener = l
	return nil
}

// Listening reports whether other servers' commits are being noticed now (PostgreSQL's
// listener holds LISTEN); always true on SQLite, which has no other servers.
func (s *Store) Listening() bool { return s.eng.listening() }

func (s *postgresEngine) listening() bool { return s.listener.Listening() }

// ClaimDueJob reads the project's job id for running it now, in the write that runs it
// and advances its next run: ErrNotFound when it is gone or not due (any more). On
// PostgreSQL the job's row is also locked for this write, and a job another server's
// write holds is ErrJobHeld: that server is running it (pgjobs.go).
func (t *Tx) ClaimDueJob(ctx context.Context, projectID string, id int64, now time.Time) (*model.Job, error) {
	return t.sql.claimDueJob(ctx, t, projectID, id, now)
}

// ErrJobHeld is a due job that another server's write is running (PostgreSQL).
var ErrJobHeld = errors.New("the job is being run by another server")

// IsDeadlock reports a write that PostgreSQL cancelled to break a deadlock with another
// server's batch (errDeadlock): nothing of it was saved, and sending it again soon is
// expected to work.
func IsDeadlock(err error) bool { return errors.Is(err, errDeadlock) }

// HoldWebhook runs fn while this server is the only one sending webhook id's events, and
// reports whether it did: false, without running fn, when another server is sending them
// now (it sends what is due). On PostgreSQL the hold is a session advisory lock on a
// connection kept for it, so that a server that dies lets go at once (its session ends);
// fn must read the webhook's cursor itself, after the hold begins. On SQLite, one server
// per data directory: fn just runs.
func (s *Store) HoldWebhook(ctx context.Context, id int64, fn func() error) (bool, error) {
	return s.eng.holdWebhook(ctx, id, fn)
}

func (s *postgresEngine) holdWebhook(ctx context.Context, id int64, fn func() error) (bool, error) {
	return postgres.HoldSessionLock(ctx, s.locks, postgres.WebhookLockKey(id), fn)
}

// lockConns bounds the pool that holds the webhooks' session locks (HoldWebhook), apart
// from the readers so that a slow receiver never holds a reader: the deliverer sends to
// at most 8 webhooks at once.
const lockConns = 16
