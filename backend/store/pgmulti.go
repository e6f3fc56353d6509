package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Several servers on one PostgreSQL database (issue 21): how a Store learns of the other
// servers' commits (the Listener of pgwake.go), runs a due job once (pgjobs.go), and
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
	l, err := StartListener(context.WithoutCancel(ctx), rawURL, ListenerOptions{
		OnEvent: func(string, int64) { foreign() },
		Resync:  foreign,
		Skip:    s.writerPIDs.has,
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

// webhookLockKey is the advisory lock key of a webhook's deliveries (the same key space
// as seqLockKey: a collision only makes one wait for the other).
func webhookLockKey(id int64) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.webhook:" + strconv.FormatInt(id, 10)))
	return int64(h.Sum64())
}

// activityLockKey is the advisory lock key the servers take turns on to fill the
// activity trail (Tx.IndexActivity; the same key space as projectLockKey).
var activityLockKey = func() int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.activity"))
	return int64(h.Sum64())
}()

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
	conn, err := s.locks.Conn(ctx)
	if err != nil {
		return false, err
	}
	key := webhookLockKey(id)
	var held bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&held); err != nil {
		conn.Close()
		return false, err
	}
	if !held {
		conn.Close()
		return false, nil
	}
	defer func() {
		// Unlocked even if ctx ended; if that fails the connection is dropped, which
		// ends its session and so its lock.
		var ok bool
		if err := conn.QueryRowContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key).Scan(&ok); err != nil || !ok {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}()
	return true, fn()
}

// lockConns bounds the pool that holds the webhooks' session locks (HoldWebhook), apart
// from the readers so that a slow receiver never holds a reader: the deliverer sends to
// at most 8 webhooks at once.
const lockConns = 16

// pidSet is the backend pids of a pool's connections (the writers', for the listener).
// A connection closed leaves its pid: at worst, another backend given it later is
// taken for one of ours, and its notification is missed; the hub also looks every second.
type pidSet struct{ m sync.Map }

func (p *pidSet) add(pid uint32)      { p.m.Store(pid, struct{}{}) }
func (p *pidSet) has(pid uint32) bool { _, ok := p.m.Load(pid); return ok }
