package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// waitFor bounds how long a test waits for something the listener must do; it is a
// failure bound, not a timing assertion (a pass takes milliseconds).
const waitFor = 15 * time.Second

type wake struct {
	project string
	seq     int64
}

// startTestListener starts a listener on url whose events and resyncs arrive on the
// returned channels.
func startTestListener(t *testing.T, ctx context.Context, rawURL string, skip func(uint32) bool) (*Listener, chan wake, chan struct{}) {
	t.Helper()
	wakes := make(chan wake, 100)
	resyncs := make(chan struct{}, 100)
	l, err := StartListener(ctx, rawURL, ListenerOptions{
		OnEvent: func(p string, seq int64) { wakes <- wake{p, seq} },
		Resync:  func() { resyncs <- struct{}{} },
		Skip:    skip,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, wakes, resyncs
}

func openPlain(t *testing.T, rawURL string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// notifyEvents runs the writer's NOTIFY statement (NotifyStatement) in tx, as a batch
// does before its COMMIT.
func notifyEvents(ctx context.Context, tx *sql.Tx, lastSeqByProject map[string]int64) (xid string, err error) {
	query, args := NotifyStatement(lastSeqByProject)
	var sent int
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&xid, &sent); err != nil {
		return "", fmt.Errorf("notify other servers: %w", err)
	}
	return xid, nil
}

// notifyIn runs notifyEvents in a transaction on db and commits it (or rolls it back).
func notifyIn(t *testing.T, db interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}, last map[string]int64, commit bool) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notifyEvents(ctx, tx, last); err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	if commit {
		err = tx.Commit()
	} else {
		err = tx.Rollback()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func nextWake(t *testing.T, wakes chan wake) wake {
	t.Helper()
	select {
	case w := <-wakes:
		return w
	case <-time.After(waitFor):
		t.Fatalf("no notification within %s", waitFor)
		return wake{}
	}
}

// testCluster is a connection to the test database's cluster, on its maintenance
// database "postgres" (a database cannot refuse connections to itself from its own), and
// the test database's name.
type testCluster struct {
	admin *sql.DB
	name  string
}

func openCluster(t *testing.T, rawURL string) testCluster {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || strings.ContainsAny(name, `"; `) {
		t.Fatalf("unexpected database name %q", name)
	}
	u.Path = "/postgres"
	return testCluster{admin: openPlain(t, u.String()), name: name}
}

// allowConnections lets (or stops) new connections to the test database.
func (c testCluster) allowConnections(t *testing.T, allow bool) {
	t.Helper()
	if _, err := c.admin.Exec(fmt.Sprintf(`ALTER DATABASE %s WITH ALLOW_CONNECTIONS %t`, c.name, allow)); err != nil {
		t.Fatal(err)
	}
}

// listenerPID is the backend pid of the test database's listener connection; 0 if none.
func (c testCluster) listenerPID(t *testing.T) int64 {
	t.Helper()
	var pid int64
	err := c.admin.QueryRow(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`, c.name, listenerAppName).Scan(&pid)
	if err == sql.ErrNoRows {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitListenerGone waits until the listener's connection has left the database.
func (c testCluster) waitListenerGone(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for c.listenerPID(t) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listener's connection is still open")
		}
		time.Sleep(10 * time.Millisecond) // polling PostgreSQL: no event to wait on
	}
}

func TestParseWake(t *testing.T) {
	for _, c := range []struct {
		in      string
		project string
		seq     int64
		ok      bool
	}{
		{"p1:42", "p1", 42, true},
		{"a:b:7", "a:b", 7, true},
		{"p1:", "", 0, false},
		{":5", "", 0, false},
		{"p1", "", 0, false},
		{"p1:x", "", 0, false},
	} {
		p, seq, ok := parseWake(c.in)
		if p != c.project || seq != c.seq || ok != c.ok {
			t.Errorf("parseWake(%q) = %q, %d, %v; want %q, %d, %v", c.in, p, seq, ok, c.project, c.seq, c.ok)
		}
	}
}

// TestListenerCommitOnly: a batch's notifications arrive when it commits, never when it
// rolls back. PostgreSQL delivers notifications in commit order, so the rolled-back
// batch's would come before the next committed one's: the next one arriving first, and
// alone, shows there was none.
func TestListenerCommitOnly(t *testing.T) {
	ctx := context.Background()
	rawURL := pgtest.DB(t)
	db := openPlain(t, rawURL)
	_, wakes, resyncs := startTestListener(t, ctx, rawURL, nil)

	notifyIn(t, db, map[string]int64{"p1": 5, "p2": 7}, true)
	got := map[wake]bool{nextWake(t, wakes): true, nextWake(t, wakes): true}
	if !got[wake{"p1", 5}] || !got[wake{"p2", 7}] {
		t.Errorf("committed batch: got %v, want p1:5 and p2:7", got)
	}

	notifyIn(t, db, map[string]int64{"p3": 1}, false)
	notifyIn(t, db, map[string]int64{"p4": 2}, true)
	if w := nextWake(t, wakes); w != (wake{"p4", 2}) {
		t.Errorf("after a rolled-back batch and a committed one: got %v first, want p4:2 (the rolled-back p3:1 must not be delivered)", w)
	}

	notifyIn(t, db, nil, true) // a batch with no events notifies nothing
	notifyIn(t, db, map[string]int64{"p5": 3}, true)
	if w := nextWake(t, wakes); w != (wake{"p5", 3}) {
		t.Errorf("got %v, want p5:3", w)
	}
	select {
	case w := <-wakes:
		t.Errorf("unexpected notification %v", w)
	case <-resyncs:
		t.Error("unexpected resync")
	default:
	}
}

// TestListenerSkipsOwnWriter: notifications from a backend Skip names (this server's
// writer) are not delivered; the others are.
func TestListenerSkipsOwnWriter(t *testing.T) {
	ctx := context.Background()
	rawURL := pgtest.DB(t)
	db := openPlain(t, rawURL)
	own, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	var ownPID uint32
	if err := own.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&ownPID); err != nil {
		t.Fatal(err)
	}
	_, wakes, _ := startTestListener(t, ctx, rawURL, func(pid uint32) bool { return pid == ownPID })
	notifyIn(t, own, map[string]int64{"mine": 1}, true)
	notifyIn(t, db, map[string]int64{"theirs": 2}, true) // the pool's other connection
	if w := nextWake(t, wakes); w != (wake{"theirs", 2}) {
		t.Errorf("got %v first, want theirs:2 (mine:1 came from the skipped backend)", w)
	}
}

// TestListenerReconnects: the listener's backend is terminated, and the database refuses
// connections for a while; the listener connects again once it may, calls Resync, and
// delivers the notifications sent after that.
func TestListenerReconnects(t *testing.T) {
	ctx := context.Background()
	rawURL := pgtest.DB(t)
	db := openPlain(t, rawURL)
	l, wakes, resyncs := startTestListener(t, ctx, rawURL, nil)
	if !l.Listening() {
		t.Fatal("Listening() is false after start")
	}

	notifyIn(t, db, map[string]int64{"p": 1}, true)
	if w := nextWake(t, wakes); w != (wake{"p", 1}) {
		t.Fatalf("got %v, want p:1", w)
	}
	cl := openCluster(t, rawURL)
	first := cl.listenerPID(t)
	if first == 0 {
		t.Fatal("no listener connection in pg_stat_activity")
	}

	// Refuse new connections to the database while the listener is cut off, so that it
	// goes through failed attempts before one succeeds.
	cl.allowConnections(t, false)
	var ok bool
	if err := cl.admin.QueryRow(`SELECT pg_terminate_backend($1)`, first).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate the listener's backend: %v %v", ok, err)
	}
	cl.waitListenerGone(t)
	for deadline := time.Now().Add(waitFor); l.Listening(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Listening() still true after the connection was lost")
		}
	}
	select {
	case <-resyncs:
		t.Fatal("resync before the listener could connect again")
	default:
	}
	cl.allowConnections(t, true)

	select {
	case <-resyncs:
	case <-time.After(waitFor):
		t.Fatalf("no resync within %s of the listener's connection being terminated", waitFor)
	}
	if !l.Listening() {
		t.Error("Listening() is false after the resync")
	}
	if again := cl.listenerPID(t); again == 0 || again == first {
		t.Fatalf("listener backend after reconnecting: %d (before: %d)", again, first)
	}
	notifyIn(t, db, map[string]int64{"p": 2}, true)
	if w := nextWake(t, wakes); w != (wake{"p", 2}) {
		t.Errorf("after reconnecting: got %v, want p:2", w)
	}
}

// TestListenerClose: Close (or the context's end) stops the goroutine and closes its
// connection, also while the listener is trying to reconnect.
func TestListenerClose(t *testing.T) {
	rawURL := pgtest.DB(t)
	cl := openCluster(t, rawURL)

	t.Run("Close", func(t *testing.T) {
		l, _, _ := startTestListener(t, context.Background(), rawURL, nil)
		if cl.listenerPID(t) == 0 {
			t.Fatal("no listener connection")
		}
		l.Close()
		select {
		case <-l.Done():
		default:
			t.Fatal("Close returned before the goroutine ended")
		}
		if l.Listening() {
			t.Error("Listening() after Close")
		}
		cl.waitListenerGone(t)
	})

	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		l, _, _ := startTestListener(t, ctx, rawURL, nil)
		cancel()
		select {
		case <-l.Done():
		case <-time.After(waitFor):
			t.Fatal("the listener did not stop when its context ended")
		}
		cl.waitListenerGone(t)
	})

	t.Run("while reconnecting", func(t *testing.T) {
		l, _, resyncs := startTestListener(t, context.Background(), rawURL, nil)
		cl.allowConnections(t, false)
		defer cl.allowConnections(t, true)
		if _, err := cl.admin.Exec(`SELECT pg_terminate_backend($1)`, cl.listenerPID(t)); err != nil {
			t.Fatal(err)
		}
		cl.waitListenerGone(t)
		closed := make(chan struct{})
		go func() { l.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(waitFor):
			t.Fatal("Close did not return while the listener was reconnecting")
		}
		select {
		case <-resyncs:
			t.Error("resync without a connection")
		default:
		}
	})

	t.Run("bad database", func(t *testing.T) {
		u, _ := url.Parse(rawURL)
		u.Path = "/no_such_database"
		if _, err := StartListener(context.Background(), u.String(), ListenerOptions{}); err == nil {
			t.Fatal("StartListener on a missing database: no error")
		} else if pw, set := u.User.Password(); set && pw != "" && strings.Contains(err.Error(), pw) {
			t.Errorf("error shows the password: %v", err)
		}
	})
}

// TestPostgresWakeSeesCommittedEvents: the whole path across two servers. Writers on two
// pools append events as a batch will (lock, read the seq, insert, advance, notifyEvents,
// commit); each server's listener wakes a follower that reads "seq > last" only when
// woken, never on a timer. Every notification must find its events already readable
// (delivered after the commit is visible), reads must be gapless, and the wakes alone
// must bring each follower to the last event.
func TestPostgresWakeSeesCommittedEvents(t *testing.T) {
	ctx := context.Background()
	rawURL := pgtest.DB(t)
	var pools [2]*sql.DB
	for i := range pools {
		db, err := Open(ctx, rawURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		pools[i] = db
	}
	projects := []string{"p1", "p2", "p3"}
	for _, p := range projects {
		if _, err := pools[0].Exec(`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ($1, $1, 'default', 's', '')`, p); err != nil {
			t.Fatal(err)
		}
	}

	// One follower per server: woken by its listener, it reads each notified project.
	type follower struct {
		wakes chan wake
		last  map[string]int64
		done  chan struct{}
	}
	final := map[string]int64{} // filled once the writers are done
	finalSet := make(chan struct{})
	followers := make([]*follower, len(pools))
	for i, db := range pools {
		_, wakes, _ := startTestListener(t, ctx, rawURL, nil)
		f := &follower{wakes: wakes, last: map[string]int64{}, done: make(chan struct{})}
		followers[i] = f
		go func() {
			defer close(f.done)
			for {
				var w wake
				select {
				case w = <-f.wakes:
				case <-time.After(waitFor):
					t.Errorf("server %d: no wake-up for %s; read up to %v", i+1, waitFor, f.last)
					return
				}
				rows, err := db.Query(`SELECT seq FROM events WHERE project_id = $1 AND seq > $2 ORDER BY seq`, w.project, f.last[w.project])
				if err != nil {
					t.Error(err)
					return
				}
				for rows.Next() {
					var seq int64
					rows.Scan(&seq)
					if seq != f.last[w.project]+1 {
						t.Errorf("server %d, %s: read seq %d after %d", i+1, w.project, seq, f.last[w.project])
					}
					f.last[w.project] = seq
				}
				rows.Close()
				if f.last[w.project] < w.seq {
					t.Errorf("server %d: woken for %s:%d but read only up to %d: notified before visible", i+1, w.project, w.seq, f.last[w.project])
				}
				select {
				case <-finalSet:
					reached := true
					for _, p := range projects {
						reached = reached && f.last[p] == final[p]
					}
					if reached {
						return
					}
				default:
				}
			}
		}()
	}

	const writers, batches = 6, 30
	var wg sync.WaitGroup
	for w := range writers {
		db := pools[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				names := []string{projects[(w+b)%3], projects[(w+2*b+1)%3]}
				if names[0] == names[1] {
					names = names[:1]
				}
				counts := map[string]int64{}
				for _, p := range names {
					counts[p] = int64(1 + b%3)
				}
				if err := appendEvents(ctx, db, names, counts, true); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range projects {
		var seq int64
		if err := pools[0].QueryRow(`SELECT event_seq FROM projects WHERE id = $1`, p).Scan(&seq); err != nil {
			t.Fatal(err)
		}
		final[p] = seq
	}
	close(finalSet)
	// A follower may have read everything before finalSet: one more wake-up lets it see
	// that it is done (a batch with no new events reads nothing).
	notifyIn(t, pools[0], map[string]int64{"p1": final["p1"]}, true)
	for i, f := range followers {
		<-f.done
		for _, p := range projects {
			if f.last[p] != final[p] {
				t.Errorf("server %d read %s up to %d, want %d", i+1, p, f.last[p], final[p])
			}
		}
	}
	t.Logf("final seqs %v", final)
}
