package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Waking the other servers on PostgreSQL (issue 21). Several servers share one database;
// a commit on one must wake the hubs (and empty the read caches) of the others. The
// writer sends a NOTIFY inside each batch's transaction (NotifyStatement), so that it is
// delivered only if the batch commits, and after its rows are visible; every server keeps
// one connection LISTENing (Listener). A notification says which project has events up
// to which seq; the hub then reads them from the events table, as it does for its own
// commits, so live delivery and ?since= replay stay one path. Notifications sent while a
// listener is disconnected are lost for it: after reconnecting it calls Resync, and the
// hub re-reads every project it watches. (The SQLite twin is sqlite.Watch.) The store
// starts one listener a server (pgmulti.go).

// wakeChannel is the channel the writer notifies and every server listens on.
const wakeChannel = "agentdesk_events"

// listenerAppName names the listener's connection in pg_stat_activity.
const listenerAppName = "agentdesk listener"

// Listener reconnect backoff: quick at first (a restarted backend), capped so that a
// server comes back within about a second of the database.
const (
	listenBackoffMin = 50 * time.Millisecond
	listenBackoffMax = time.Second
)

// NotifyStatement tells the other servers, when the batch's transaction commits, the
// last event seq of each project the batch appended events to. PostgreSQL delivers a
// transaction's notifications on commit, after its changes are visible, and drops them
// on rollback. One statement for the whole batch, sent with its COMMIT
// (the store's commitPostgres). It returns the transaction's id and the count of notifications.
// The order among projects does not matter: each project's notification stands alone.
func NotifyStatement(lastSeqByProject map[string]int64) (query string, args []any) {
	payloads := make([]string, 0, len(lastSeqByProject))
	for p, seq := range lastSeqByProject {
		payloads = append(payloads, p+":"+strconv.FormatInt(seq, 10))
	}
	slices.Sort(payloads) // the same text for the same batch, for tests and logs
	return `SELECT pg_current_xact_id()::text, count(pg_notify($1, p)) FROM unnest($2::text[]) AS p`, []any{wakeChannel, payloads}
}

// parseWake reads a notification's payload "<project>:<seq>". A project id could hold a
// colon; a seq cannot, so the last colon separates them.
func parseWake(payload string) (project string, seq int64, ok bool) {
	i := strings.LastIndexByte(payload, ':')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(payload[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return payload[:i], seq, true
}

// ListenerOptions are what a Listener calls. Both callbacks run on the listener's
// goroutine, one at a time: they must not block (wake the hub, empty a cache).
type ListenerOptions struct {
	// OnEvent is called for each notification: project has committed events up to seq.
	OnEvent func(project string, seq int64)
	// Resync is called after the listener reconnected: notifications sent meanwhile are
	// lost, so whatever they would have woken must look for itself (the hub re-reads
	// every project it watches; the caches empty). Also called for a payload it cannot
	// read.
	Resync func()
	// Skip, if set, tells the notifications to ignore by the backend pid that sent them:
	// this server's own writer, whose commits wake its hub directly.
	Skip func(pid uint32) bool
}

// Listener keeps one connection LISTENing on agentdesk_events and reconnects when it is
// lost. Close stops it.
type Listener struct {
	cfg    *pgx.ConnConfig
	opts   ListenerOptions
	cancel context.CancelFunc
	done   chan struct{}
	// listening is true while the connection holds LISTEN: while it is false, other
	// servers' commits go unnoticed, and a cache that relies on them must not be used.
	listening atomic.Bool
}

// StartListener connects to the database at rawURL, LISTENs, and calls opts' callbacks
// from then on until ctx ends or Close. The first connection is made before it returns,
// so that a wrong URL or an unreachable database is an error at start; after that, a lost
// connection is made again with backoff (50 ms doubling to 1 s), for as long as it takes.
func StartListener(ctx context.Context, rawURL string, opts ListenerOptions) (*Listener, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, errors.New("listener: cannot read the database URL") // it may hold a password
	}
	cfg.RuntimeParams["application_name"] = listenerAppName
	// The connection only reads; a database host that vanished without a reset would
	// leave it waiting forever. TCP keepalives notice within about 30 s.
	timeout := cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}}
	cfg.DialFunc = dialer.DialContext
	if opts.OnEvent == nil {
		opts.OnEvent = func(string, int64) {}
	}
	if opts.Resync == nil {
		opts.Resync = func() {}
	}
	l := &Listener{cfg: cfg, opts: opts, done: make(chan struct{})}
	conn, err := l.connect(ctx)
	if err != nil {
		return nil, err
	}
	l.listening.Store(true)
	ctx, l.cancel = context.WithCancel(ctx)
	go l.run(ctx, conn)
	return l, nil
}

// Close stops the listener and waits for its goroutine to end (its connection closed).
func (l *Listener) Close() error {
	l.cancel()
	<-l.done
	return nil
}

// Listening reports whether other servers' commits are being noticed now: false from
// the moment the connection is found lost until it is made again (and after Close).
// A read cache emptied by OnEvent must be bypassed while it is false.
func (l *Listener) Listening() bool { return l.listening.Load() }

// Done is closed when the listener has stopped.
func (l *Listener) Done() <-chan struct{} { return l.done }

func (l *Listener) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, fmt.Errorf("listener: connect: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+wakeChannel); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("listener: listen: %w", err)
	}
	return conn, nil
}

func (l *Listener) run(ctx context.Context, conn *pgx.Conn) {
	defer close(l.done)
	defer l.listening.Store(false)
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for {
		n, err := conn.WaitForNotification(ctx)
		if n != nil {
			l.deliver(n.PID, n.Payload)
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		l.listening.Store(false)
		slog.Warn("postgres listener: connection lost; reconnecting", "err", err)
		conn.Close(context.Background())
		if conn = l.reconnect(ctx); conn == nil {
			return // stopped
		}
		// LISTEN holds again: anything committed from now on is notified; what was
		// committed while it did not must be looked for.
		l.listening.Store(true)
		l.opts.Resync()
	}
}

// reconnect connects and LISTENs again, with backoff, until it succeeds (the
// connection) or ctx ends (nil).
func (l *Listener) reconnect(ctx context.Context) *pgx.Conn {
	wait := listenBackoffMin
	for attempt := 1; ; attempt++ {
		conn, err := l.connect(ctx)
		if err == nil {
			if attempt > 1 {
				slog.Info("postgres listener: reconnected", "attempts", attempt)
			}
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		if attempt == 1 || attempt%30 == 0 {
			slog.Warn("postgres listener: reconnect failed; retrying", "err", err, "attempts", attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, listenBackoffMax)
	}
}

func (l *Listener) deliver(pid uint32, payload string) {
	if l.opts.Skip != nil && l.opts.Skip(pid) {
		return
	}
	project, seq, ok := parseWake(payload)
	if !ok {
		// Not ours to understand (a newer server?): looking everywhere is always safe.
		slog.Warn("postgres listener: unreadable notification; resyncing", "payload", payload)
		l.opts.Resync()
		return
	}
	l.opts.OnEvent(project, seq)
}
