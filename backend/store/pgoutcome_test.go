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
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPostgresCommitOutcome: a batch's COMMIT fails on PostgreSQL, and the writer finds
// out what became of it instead of stopping (pgoutcome.go).
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
		return s.Write(ctx, func(tx *Tx) error {
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
	onCommit := func(hook func()) { s.beforeCommit.Store(&hook) }

	t.Run("answer lost after the commit", func(t *testing.T) {
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
		onCommit(func() {
			pid := s.writerPID.Load()
			if _, err := s.locks.ExecContext(ctx, `SELECT pg_terminate_backend($1, 5000)`, int64(pid)); err != nil {
				t.Error(err)
			}
		})
		err := insert("lost")
		if !errs.IsUnavailable(err) || !errors.Is(err, errRolledBack) {
			t.Fatalf("write whose backend was ended: %v; want errRolledBack", err)
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
