package store

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPostgresCommitOutcome: a batch's COMMIT fails on PostgreSQL, and the writer finds
// out what became of it instead of stopping (postgres.Outcome).
//   - The answer is lost after the database committed (a proxy drops it): the write is
//     acknowledged, and its project is there.
//   - The connection's backend is ended before the COMMIT: the write is told that
//     nothing was saved (503), nothing of it is there.
//
// Either way the store goes on taking writes.
func TestPostgresCommitOutcome(t *testing.T) {
	ctx := context.Background()
	rawURL := pgtest.DBFor(t, "postgres", migrateTestPostgres)
	proxy := startCutProxy(t, rawURL)
	loc, err := ParseDB(proxy.url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenLocation(ctx, loc, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	insert := func(id string) error {
		return s.Write(ctx, Author{}, func(tx *Tx) error {
			return tx.InsertProject(ctx, &model.Project{ID: id, Name: id, Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
		})
	}
	exists := func(id string) bool {
		var n int
		if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM projects WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	onCommit := func(hook func()) { postgresOf(s).beforeCommit.Store(&hook) }

	t.Run("answer lost after the commit", func(t *testing.T) {
		// The connection's first batch also prepares its statements, a round trip of
		// its own before the one that ends with the COMMIT (pgwrite.go): that first
		// answer is not the one to lose.
		if err := insert("warm"); err != nil {
			t.Fatal(err)
		}
		onCommit(func() { proxy.cutNextAnswer.Store(true) })
		if err := insert("kept"); err != nil {
			t.Fatalf("write whose COMMIT answer was lost: %v; want it acknowledged", err)
		}
		if !exists("kept") {
			t.Fatal("acknowledged, but not stored")
		}
		if proxy.cuts.Load() != 1 {
			t.Fatalf("%d connections cut; want 1", proxy.cuts.Load())
		}
	})
	t.Run("backend ended before the commit", func(t *testing.T) {
		onCommit(func() { endWriters(t, s) })
		err := insert("lost")
		if !errs.IsUnavailable(err) || !errors.Is(err, postgres.ErrRolledBack) {
			t.Fatalf("write whose backend was ended: %v; want postgres.ErrRolledBack", err)
		}
		if exists("lost") {
			t.Fatal("told it was not saved, but stored")
		}
	})
	if err := s.Stopped(); err != nil {
		t.Fatalf("the store stopped: %v", err)
	}
	if err := insert("after"); err != nil || !exists("after") {
		t.Fatalf("a write after the failed commits: %v", err)
	}
}

// cutProxy forwards TCP connections to PostgreSQL. With cutNextAnswer set, it drops the
// next bytes the server sends and closes that client connection: a COMMIT that reached
// the server whose answer never comes back.
type cutProxy struct {
	url           string
	cutNextAnswer atomic.Bool
	cuts          atomic.Int32
}

func startCutProxy(t *testing.T, rawURL string) *cutProxy {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	u.Host = l.Addr().String()
	p := &cutProxy{url: u.String()}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			wg.Add(2)
			go func() { // client -> server
				defer wg.Done()
				io.Copy(server, client)
				server.Close()
			}()
			go func() { // server -> client, unless cut
				defer wg.Done()
				defer client.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 && p.cutNextAnswer.CompareAndSwap(true, false) {
						p.cuts.Add(1)
						server.Close()
						return
					}
					if n > 0 {
						if _, err := client.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

// TestPostgresStalledServerReleasesItsLocks: a server stalls in the middle of a batch
// with its connection open (here: its writer waits in a hook before the COMMIT), holding
// the lock of project p. PostgreSQL ends that session after the writer's
// idle-in-transaction timeout, so the other server's write to p goes through instead
// of waiting for hours; the stalled server's write is then told nothing was saved.
func TestPostgresStalledServerReleasesItsLocks(t *testing.T) {
	ctx := context.Background()
	defer func(d time.Duration) { writerIdleInTransaction = d }(writerIdleInTransaction)
	writerIdleInTransaction = 500 * time.Millisecond
	stores := twoPostgresStores(t)
	inP := Author{Project: "p"}
	appendOne := func(s *Store) error {
		return s.Write(ctx, inP, func(tx *Tx) error { return tx.AppendEvent(ctx, "p", "test", map[string]int{}, time.Now()) })
	}
	if err := stores[0].Write(ctx, Author{}, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	other := make(chan error, 1)
	stall := func() {
		go func() { other <- appendOne(stores[1]) }()
		select {
		case err := <-other:
			other <- err
		case <-time.After(30 * time.Second): // a hang, not a speed
			t.Error("the other server's write still waits for the stalled server's lock after 30 s")
		}
	}
	postgresOf(stores[0]).beforeCommit.Store(&stall)
	if err := appendOne(stores[0]); !errors.Is(err, postgres.ErrRolledBack) {
		t.Errorf("the stalled server's write: %v; want postgres.ErrRolledBack", err)
	}
	if err := <-other; err != nil {
		t.Fatalf("the other server's write: %v", err)
	}
	events, err := stores[1].Read().EventsSince(ctx, "p", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Seq != 1 {
		t.Fatalf("events %+v; want the other server's alone, seq 1", events)
	}
}

// TestPostgresWriterConnectionLostWhileIdle: the writer's connection is lost between
// two writes (its backend ended, a database restart): the next write is sent on a new
// connection and succeeds. A write's BEGIN goes out with its lock and seq (pgwrite.go),
// so the first sign of the loss is that round trip failing.
func TestPostgresWriterConnectionLostWhileIdle(t *testing.T) {
	ctx := context.Background()
	s := postgresTestStore(t)
	for i, id := range []string{"first", "second", "third"} {
		if i > 0 {
			if endWriters(t, s) == 0 {
				t.Fatal("no writer's backend ended")
			}
		}
		if err := insertProjectIn(s, id, func() {}); err != nil {
			t.Fatalf("write %q after the writer's connection was lost: %v", id, err)
		}
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM projects WHERE id IN ('first', 'second', 'third')`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d of 3 projects stored (%v)", n, err)
	}
}

// TestPostgresWriterConnectionLostInAWrite: the writer's connection is lost while a
// write runs. The write is answered with an error (it once waited forever: its
// statement failed, and so did the ROLLBACK TO its savepoint), nothing of it is stored,
// and the next write goes through on a new connection.
func TestPostgresWriterConnectionLostInAWrite(t *testing.T) {
	ctx := context.Background()
	s := postgresTestStore(t)
	var once sync.Once
	endWriter := func() {
		once.Do(func() { endWriters(t, s) }) // the connection is lost once
	}
	answered := make(chan error, 1)
	go func() { answered <- insertProjectIn(s, "lost", endWriter) }()
	select {
	case err := <-answered:
		if err == nil {
			t.Fatal("a write whose connection was lost as it ran was acknowledged")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write whose connection was lost as it ran was not answered in 30 s")
	}
	if err := insertProjectIn(s, "after", func() {}); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM projects WHERE id = 'lost'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the lost write stored %d times (%v)", n, err)
	}
}

// postgresTestStore opens a store on a new test database.
func postgresTestStore(t *testing.T) *Store {
	t.Helper()
	loc, err := ParseDB(pgtest.DBFor(t, "postgres", migrateTestPostgres))
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenLocation(context.Background(), loc, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// insertProjectIn writes project id, in a write of that project that calls before
// first (on the writer goroutine: it must not call t.Fatal).
func insertProjectIn(s *Store, id string, before func()) error {
	ctx := context.Background()
	return s.Write(ctx, Author{Project: id}, func(tx *Tx) error {
		before()
		return tx.InsertProject(ctx, &model.Project{ID: id, Name: id, Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	})
}

// endWriters ends the backends of s's writer connections, as a lost connection would,
// and returns how many it ended.
func endWriters(t *testing.T, s *Store) (ended int) {
	t.Helper()
	postgresOf(s).writerPIDs.Each(func(pid uint32) {
		var ok bool
		if err := postgresOf(s).locks.QueryRowContext(context.Background(), `SELECT pg_terminate_backend($1, 5000)`, int64(pid)).Scan(&ok); err != nil {
			t.Errorf("end the writer's backend %d: %v", pid, err)
		}
		if ok {
			ended++
		}
	})
	return ended
}
