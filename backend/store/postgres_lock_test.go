package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestProjectLocksAcrossStores: two stores on one database stand for two servers. Writers
// on both change three projects at once, each write renaming a random task of its
// project, creating a task and appending an event, so that two batches lock a
// project's rows (tasks, task_counts, projects) in different orders. Each write names
// its project (its Author), so its batch takes the project's lock first: no write may
// fail (before the locks, PostgreSQL cancelled some as deadlocks), a batch whose lock
// deadlocks with the other server's puts its write back, and every project's events
// end gapless, one per write.
func TestProjectLocksAcrossStores(t *testing.T) {
	ctx := context.Background()
	stores := twoPostgresStores(t)
	projects := []string{"p1", "p2", "p3"}
	tasks := map[string][]int64{}
	if err := stores[0].Write(ctx, Author{}, func(tx *Tx) error {
		for _, p := range projects {
			if err := tx.InsertProject(ctx, &model.Project{ID: p, Name: p, Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()}); err != nil {
				return err
			}
			for range 4 {
				task := &model.Task{ProjectID: p, Summary: "t", Status: "Backlog", Source: "user", TaskType: "standard", CreatedAt: time.Now(), UpdatedAt: time.Now()}
				if err := tx.InsertTask(ctx, task); err != nil {
					return err
				}
				tasks[p] = append(tasks[p], task.ID)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	const writers, writes = 16, 40
	written := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			s := stores[w%2]
			for i := range writes {
				p := projects[rng.IntN(len(projects))]
				rename := tasks[p][rng.IntN(len(tasks[p]))]
				err := s.Write(ctx, Author{Project: p}, func(tx *Tx) error {
					task, err := tx.Task(ctx, p, rename, false)
					if err != nil {
						return err
					}
					task.Summary = fmt.Sprintf("writer %d, write %d", w, i)
					if err := tx.UpdateTask(ctx, task); err != nil {
						return err
					}
					created := &model.Task{ProjectID: p, Summary: "new", Status: "Todo", Source: "user", TaskType: "standard", CreatedAt: time.Now(), UpdatedAt: time.Now()}
					if err := tx.InsertTask(ctx, created); err != nil {
						return err
					}
					return tx.AppendEvent(ctx, p, "task.created", created, created.CreatedAt)
				})
				if err != nil {
					t.Errorf("writer %d, write %d in %s: %v", w, i, p, err)
					return
				}
				mu.Lock()
				written[p]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, p := range projects {
		events, err := stores[1].Read().EventsSince(ctx, p, 0, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != written[p] {
			t.Errorf("%s: %d events for %d writes", p, len(events), written[p])
		}
		for i, e := range events {
			if e.Seq != int64(i+1) {
				t.Fatalf("%s: event %d has seq %d", p, i+1, e.Seq)
			}
		}
	}
}

// twoPostgresStores opens two stores on one new migrated PostgreSQL database: two
// servers, as far as the database can tell.
func twoPostgresStores(t *testing.T) [2]*Store {
	t.Helper()
	loc, err := ParseDB(pgtest.DBFor(t, "postgres", migrateTestPostgres))
	if err != nil {
		t.Fatal(err)
	}
	var stores [2]*Store
	for i := range stores {
		s, err := OpenLocation(context.Background(), loc, "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	return stores
}

// TestPostgresLostConnectionWhileWaitingForALock: a write waits for its project's lock
// (another server's batch holds it) and its connection is ended meanwhile. Nothing of
// the write had run, so the store sends it again on a new connection, where it waits
// for the lock again and goes through once the other batch commits; its events follow
// the other batch's, without a gap.
func TestPostgresLostConnectionWhileWaitingForALock(t *testing.T) {
	ctx := context.Background()
	stores := twoPostgresStores(t)
	if err := stores[0].Write(ctx, Author{}, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	inP := Author{Project: "p"}
	appendOne := func(s *Store) error {
		return s.Write(ctx, inP, func(tx *Tx) error { return tx.AppendEvent(ctx, "p", "test", map[string]int{}, time.Now()) })
	}
	// waitsForTheLock waits until one of stores[1]'s writer connections, other than the
	// one of pid not, waits for an advisory lock; it returns that connection's pid.
	waitsForTheLock := func(not uint32) uint32 {
		deadline := time.Now().Add(30 * time.Second) // a hang, not a speed
		for time.Now().Before(deadline) {
			rows, err := postgresOf(stores[0]).locks.QueryContext(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)
			if err != nil {
				t.Error(err)
				return 0
			}
			var waiting []uint32
			for rows.Next() {
				var pid uint32
				if err := rows.Scan(&pid); err != nil {
					t.Error(err)
				}
				waiting = append(waiting, pid)
			}
			rows.Close()
			for _, pid := range waiting {
				if postgresOf(stores[1]).writerPIDs.Has(pid) && pid != not {
					return pid
				}
			}
			time.Sleep(time.Millisecond)
		}
		t.Error("stores[1]'s writer does not wait for the lock after 30 s")
		return 0
	}
	waiter := make(chan error, 1)
	hold := func() { // stores[0]'s batch holds p's lock while stores[1]'s write waits for it
		go func() { waiter <- appendOne(stores[1]) }()
		first := waitsForTheLock(0)
		if _, err := postgresOf(stores[0]).locks.ExecContext(ctx, `SELECT pg_terminate_backend($1, 5000)`, int64(first)); err != nil {
			t.Error(err)
		}
		waitsForTheLock(first) // sent again, on a new connection
	}
	postgresOf(stores[0]).beforeCommit.Store(&hold)
	if err := appendOne(stores[0]); err != nil {
		t.Fatalf("the write holding the lock: %v", err)
	}
	select {
	case err := <-waiter:
		if err != nil {
			t.Errorf("the write whose connection was ended while it waited: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write whose connection was ended while it waited is not answered 30 s after the lock was freed")
	}
	if err := appendOne(stores[1]); err != nil {
		t.Fatalf("the next write on the store whose connection was ended: %v", err)
	}
	var seqs []int64
	rows, err := stores[0].reader.QueryContext(ctx, `SELECT seq FROM events WHERE project_id = 'p' AND type = 'test' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	if len(seqs) != 3 || seqs[1] != seqs[0]+1 || seqs[2] != seqs[1]+1 {
		t.Fatalf("the events' seqs: %v; want three in a row", seqs)
	}
}
