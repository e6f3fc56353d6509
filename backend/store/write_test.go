package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	return openTestOn(t, "sqlite")
}

// openTestOn is openTest on a database of the engine (pgtest.Engines).
func openTestOn(t testing.TB, engine string) *Store {
	t.Helper()
	loc, err := ParseDB(pgtest.DBFor(t, engine, migrateTestPostgres))
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenLocation(context.Background(), loc, t.TempDir()+"/agentdesk.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Write(context.Background(), Author{}, func(tx *Tx) error {
		return tx.InsertProject(context.Background(), &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// migrateTestPostgres migrates a new test database (pgtest.Migrated).
func migrateTestPostgres(url string) error {
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		return err
	}
	return db.Close()
}

// TestGroupCommitIsolatesFailures: concurrent writes share transactions, yet a write
// that fails (or panics) leaves no trace and the others commit.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	pgtest.Engines(t, testGroupCommitIsolatesFailures)
}

func testGroupCommitIsolatesFailures(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 300)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Write(ctx, Author{}, func(tx *Tx) error {
				task := &model.Task{ProjectID: "p", Summary: fmt.Sprint(i), Status: "Backlog", Source: "user", TaskType: "standard",
					Steps: []model.Step{{Title: "a", Status: "pending"}}, CreatedAt: time.Now(), UpdatedAt: time.Now()}
				if err := tx.InsertTask(ctx, task); err != nil {
					return err
				}
				if err := tx.AppendEvent(ctx, "p", "task.created", task, time.Now()); err != nil {
					return err
				}
				switch i % 3 {
				case 1:
					return errors.New("refused") // after writing: must roll back to its savepoint
				case 2:
					if i%9 == 2 {
						panic("boom")
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case i%3 == 0 && err != nil:
			t.Fatalf("write %d: %v", i, err)
		case i%3 == 1 && (err == nil || err.Error() != "refused"):
			t.Fatalf("write %d: %v, want refused", i, err)
		case i%9 == 2 && err == nil:
			t.Fatalf("panicking write %d reported success", i)
		case err == nil:
			ok++
		}
	}
	tasks, _, err := s.Read().Tasks(ctx, TaskFilter{ProjectID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != ok {
		t.Fatalf("%d tasks stored, %d writes succeeded", len(tasks), ok)
	}
	events, err := s.Read().EventsSince(ctx, "p", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != ok {
		t.Fatalf("%d events for %d changes", len(events), ok)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event seqs have a gap: %d at position %d", e.Seq, i)
		}
	}
	// Each stored event has its activity entry once the trail is filled, and the
	// project's seq is the last one.
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		more, err := tx.IndexActivity(ctx, 0)
		if more {
			t.Error("IndexActivity with no limit left events out")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var activities, lastActivity, projectSeq int64
	if err := s.reader.QueryRow(`SELECT COUNT(*), COALESCE(MAX(event_seq), 0) FROM activity WHERE project_id = 'p'`).Scan(&activities, &lastActivity); err != nil {
		t.Fatal(err)
	}
	if err := s.reader.QueryRow(`SELECT event_seq FROM projects WHERE id = 'p'`).Scan(&projectSeq); err != nil {
		t.Fatal(err)
	}
	if activities != int64(ok) || lastActivity != int64(ok) || projectSeq != int64(ok) {
		t.Fatalf("%d activity entries (last seq %d), project seq %d, for %d changes", activities, lastActivity, projectSeq, ok)
	}
	for _, task := range tasks {
		if len(task.Steps) != 1 {
			t.Fatalf("task %d has %d steps", task.ID, len(task.Steps))
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir+"/agentdesk.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(context.Background(), dir+"/agentdesk.db", Options{}); err == nil || !strings.Contains(err.Error(), "newer agentdesk") {
		t.Fatalf("opening a newer database: %v", err)
	}
}

// TestFullSyncsBeforeAcknowledging: with FULL, writes are acknowledged after the
// syncer's fsync of the WAL, one fsync serving whole batches; NORMAL does no fsync.
func TestFullSyncsBeforeAcknowledging(t *testing.T) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			s, err := Open(ctx, t.TempDir()+"/agentdesk.db", Options{Synchronous: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Write(ctx, Author{}, func(tx *Tx) error {
				return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
			}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 200 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := s.Write(ctx, Author{}, func(tx *Tx) error {
						return tx.AppendEvent(ctx, "p", "test.event", map[string]int{"id": i}, time.Now())
					}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			st := s.Stats()
			if st.Writes != 201 || st.Batches > st.Writes {
				t.Fatalf("stats %+v", st)
			}
			if mode == "FULL" && (st.Syncs < 1 || st.Syncs > st.Batches) {
				t.Fatalf("FULL: %d fsyncs for %d batches", st.Syncs, st.Batches)
			}
			if mode == "NORMAL" && st.Syncs != 0 {
				t.Fatalf("NORMAL: %d fsyncs", st.Syncs)
			}
			_, last, err := s.Read().EventBounds(ctx, "p")
			if err != nil || last != 200 {
				t.Fatalf("last event seq %d, %v", last, err)
			}
			t.Logf("%s: %d writes in %d batches, %d fsyncs", mode, st.Writes, st.Batches, st.Syncs)
		})
	}
}

// TestEventsWaitForTheirFsync: while a batch's fsync is under way, its writer is not
// answered and event reads (the stream, replay) do not show its events, though the
// batch is committed; once the fsync is done, both happen.
func TestEventsWaitForTheirFsync(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	release := make(chan struct{})
	var releaseOnce sync.Once
	// Runs before the store's Close (cleanups run last first), even when the test fails.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	syncing := make(chan struct{}, 16)
	hook := func([]model.Event) error {
		syncing <- struct{}{}
		<-release
		return nil
	}
	sqliteOf(s).beforeSync.Store(&hook)
	done := make(chan error, 1)
	go func() {
		done <- s.Write(ctx, Author{}, func(tx *Tx) error {
			return tx.AppendEvent(ctx, "p", "test.held", map[string]int{"id": 1}, time.Now())
		})
	}()
	<-syncing // committed, its fsync about to run
	var stored int
	if err := s.reader.QueryRow(`SELECT COUNT(*) FROM events WHERE type = 'test.held'`).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("the batch is not committed: %d rows, %v", stored, err)
	}
	select {
	case err := <-done:
		t.Fatalf("the write was answered before its fsync: %v", err)
	default:
	}
	evs, err := s.Read().EventsSince(ctx, "p", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	_, last, err := s.Read().EventBounds(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == "test.held" {
			t.Fatalf("event %d shown before its fsync", e.Seq)
		}
	}
	if last != int64(len(evs)) {
		t.Fatalf("last seq %d shown before its fsync (durable events: %d)", last, len(evs))
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	evs, err = s.Read().EventsSince(ctx, "p", 0, 100)
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Type != "test.held" {
		t.Fatalf("after the fsync: %+v %v", evs, err)
	}
}

// TestConnectionSettings: every reader runs query-only with a 1 MiB page cache; the
// writer keeps SQLite's 2 MiB and checkpoints nothing itself (sqlite.Checkpointer does).
func TestConnectionSettings(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	readers := make([]*sql.Conn, 4) // the whole pool, held at once: each a connection of its own
	for i := range readers {
		c, err := s.reader.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		readers[i] = c
	}
	for i, c := range readers {
		var cache, queryOnly int
		if err := c.QueryRowContext(ctx, "SELECT (SELECT cache_size FROM pragma_cache_size), (SELECT query_only FROM pragma_query_only)").Scan(&cache, &queryOnly); err != nil {
			t.Fatal(err)
		}
		if cache != -1024 || queryOnly != 1 {
			t.Errorf("reader %d: cache_size %d, query_only %d; want -1024 and 1", i, cache, queryOnly)
		}
	}
	var cache, autocheckpoint int
	if err := s.writer.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache); err != nil {
		t.Fatal(err)
	}
	if err := s.writer.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&autocheckpoint); err != nil {
		t.Fatal(err)
	}
	if cache != -2000 || autocheckpoint != 0 {
		t.Errorf("writer: cache_size %d, wal_autocheckpoint %d; want -2000 and 0", cache, autocheckpoint)
	}
}

// TestEveryWriteRunsOnce: on both engines each write of a batch runs in a savepoint of
// its own and runs once, whether it, a write before it or a write after it fails, and
// however it fails (refusing after a change, having only read, or with a statement the
// database refused): its outcome is its own, and the others' stay stored.
func TestEveryWriteRunsOnce(t *testing.T) {
	pgtest.Engines(t, testEveryWriteRunsOnce)
}

func testEveryWriteRunsOnce(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	var mu sync.Mutex
	runs := map[string]int{}
	refused := errors.New("refused")
	insert := func(name string, then error) func(*Tx) error {
		return func(tx *Tx) error {
			mu.Lock()
			runs[name]++
			mu.Unlock()
			if err := insertBacklogTask(tx, name); err != nil {
				return err
			}
			return then
		}
	}
	readOnly := func(name, query string) func(*Tx) error {
		return func(tx *Tx) error {
			mu.Lock()
			runs[name]++
			mu.Unlock()
			var n int64
			if err := tx.queryRow(ctx, query).Scan(&n); err != nil {
				return err
			}
			return refused
		}
	}
	writes := []struct {
		name string
		fn   func(*Tx) error
		ok   bool
	}{
		{"a", insert("a", nil), true},
		{"read-and-refuse", readOnly("read-and-refuse", `SELECT COUNT(*) FROM tasks`), false},
		{"b", insert("b", nil), true},
		{"c", insert("c", nil), true},
		{"refused-after-insert", insert("refused-after-insert", refused), false},
		{"d", insert("d", nil), true},
		{"bad-statement", readOnly("bad-statement", `SELECT COUNT(*) FROM no_such_table`), false},
		{"e", insert("e", nil), true},
	}
	queued := make([]batchWrite, len(writes))
	for i, w := range writes {
		queued[i] = batchWrite{fn: w.fn}
	}
	for i, err := range inOneBatch(t, s, queued...) {
		if writes[i].ok != (err == nil) {
			t.Errorf("%s: %v", writes[i].name, err)
		}
	}
	if got := storedSummaries(t, s); got != "a b c d e" {
		t.Fatalf("tasks stored: %s, want a b c d e", got)
	}
	events, err := s.Read().EventsSince(ctx, "p", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event seqs have a gap: %d at position %d", e.Seq, i)
		}
	}
	if len(events) != 5 {
		t.Fatalf("%d events for 5 tasks", len(events))
	}
	want := map[string]int{"a": 1, "read-and-refuse": 1, "b": 1, "c": 1, "refused-after-insert": 1, "d": 1, "bad-statement": 1, "e": 1}
	mu.Lock()
	defer mu.Unlock()
	for name, n := range want {
		if runs[name] != n {
			t.Errorf("%s ran %d times, want %d (all: %v)", name, runs[name], n, runs)
		}
	}
}

// batchWrite is a write for inOneBatch, made with ctx (nil: context.Background()) by by.
type batchWrite struct {
	ctx context.Context
	by  Author
	fn  func(*Tx) error
}

// inOneBatch runs writes in one batch, in order, and returns their results: a first
// write holds the writer until all of them are queued behind it. PostgreSQL has no
// batches (each write is a transaction of its own): they run one after the other.
func inOneBatch(t *testing.T, s *Store, writes ...batchWrite) []error {
	t.Helper()
	ctx := context.Background()
	if onPostgres(s) {
		out := make([]error, len(writes))
		for i, w := range writes {
			out[i] = s.Write(cmp.Or(w.ctx, ctx), w.by, w.fn)
		}
		return out
	}
	release, held := make(chan struct{}), make(chan struct{})
	holding := make(chan error, 1)
	go func() {
		holding <- s.Write(ctx, Author{}, func(tx *Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	results := make([]chan error, len(writes))
	for i, w := range writes {
		results[i] = make(chan error, 1)
		n := len(sqliteOf(s).jobs)
		wctx := cmp.Or(w.ctx, ctx)
		go func() { results[i] <- s.Write(wctx, w.by, w.fn) }()
		for len(sqliteOf(s).jobs) == n {
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	if err := <-holding; err != nil {
		t.Errorf("the write holding the writer: %v", err)
	}
	out := make([]error, len(writes))
	for i := range results {
		out[i] = <-results[i]
	}
	return out
}

// insertBacklogTask stores a task of project p with summary, and its event.
func insertBacklogTask(tx *Tx, summary string) error {
	ctx := context.Background()
	task := &model.Task{ProjectID: "p", Summary: summary, Status: "Backlog", Source: "user", TaskType: "standard",
		CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := tx.InsertTask(ctx, task); err != nil {
		return err
	}
	return tx.AppendEvent(ctx, "p", "task.created", task, time.Now())
}

// storedSummaries is the summaries of project p's tasks, in order, space-separated.
func storedSummaries(t *testing.T, s *Store) string {
	t.Helper()
	tasks, _, err := s.Read().Tasks(context.Background(), TaskFilter{ProjectID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, task := range tasks {
		stored = append(stored, task.Summary)
	}
	return strings.Join(stored, " ")
}

// TestRefusedEventsFailTheBatch: the database refuses the batch's events as it stores
// them (here an event row with the same seq, put there behind the batch's back). On
// PostgreSQL they go with the COMMIT in one round trip, which then does not run
// (pgwrite.go). The batch's writes are told, nothing of it is stored, and the store
// goes on.
func TestRefusedEventsFailTheBatch(t *testing.T) { pgtest.Engines(t, testRefusedEventsFailTheBatch) }

func testRefusedEventsFailTheBatch(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	err := s.Write(ctx, Author{Project: "p"}, func(tx *Tx) error {
		if err := tx.AppendEvent(ctx, "p", "test", map[string]int{}, time.Now()); err != nil {
			return err
		}
		seq := tx.events[len(tx.events)-1].Seq
		runBehindItsBack(t, tx, `INSERT INTO events (project_id, seq, type, data, at, actor_kind, actor, via, object_id) VALUES ('p', $1, 'squatter', $2, 'x', '', '', '', '')`,
			seq, []byte("{}"))
		return tx.InsertAgent(ctx, &model.Agent{ProjectID: "p", Name: "refused", CreatedAt: time.Now()})
	})
	if err == nil {
		t.Fatal("a write whose batch's events were refused was acknowledged")
	}
	if err := s.Stopped(); err != nil {
		t.Fatalf("the store stopped: %v", err)
	}
	var agents, events int
	if err := s.reader.QueryRowContext(context.Background(), `SELECT (SELECT count(*) FROM agents), (SELECT count(*) FROM events)`).Scan(&agents, &events); err != nil {
		t.Fatal(err)
	}
	if agents != 0 || events != 0 {
		t.Fatalf("%d agents and %d events stored by a refused batch; want none", agents, events)
	}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.AppendEvent(ctx, "p", "test", map[string]int{}, time.Now()) }); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// runBehindItsBack runs a statement in the batch's transaction but not through the
// write's Tx: a change the batch does not know of, as no other writer
// can make one.
func runBehindItsBack(t *testing.T, tx *Tx, query string, args ...any) {
	t.Helper()
	if _, err := tx.b.q.ExecContext(context.Background(), query, args...); err != nil {
		t.Error(err)
	}
}
