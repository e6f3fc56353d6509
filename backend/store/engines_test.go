package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestEventSeqsAcrossStores: two stores on one database (two servers on one PostgreSQL,
// or the CLI beside a server on one SQLite file) write events of one project at once.
// Every event gets its own seq, with no gap; a write's LastEventSeq, read after its own
// events, is the seq of its last event (on PostgreSQL the batch numbers its events only
// as it commits, so this is the case where the numbering must hold the project's lock).
func TestEventSeqsAcrossStores(t *testing.T) { pgtest.Engines(t, testEventSeqsAcrossStores) }

func testEventSeqsAcrossStores(t *testing.T, engine string) {
	ctx := context.Background()
	loc, err := ParseDB(pgtest.DBFor(t, engine, migrateTestPostgres))
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/agentdesk.db"
	var stores []*Store
	for range 2 {
		s, err := OpenLocation(ctx, loc, path, Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	if err := stores[0].Write(ctx, Author{}, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	const writers, writes = 8, 20
	last := make([]int64, writers*writes) // LastEventSeq seen by each write
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			for i := range writes {
				k := w*writes + i
				errs <- s.Write(ctx, Author{}, func(tx *Tx) error {
					for part := range 2 {
						if err := tx.AppendEvent(ctx, "p", "test.event", map[string]int{"k": k, "part": part}, time.Now()); err != nil {
							return err
						}
					}
					seq, err := tx.LastEventSeq(ctx, "p")
					last[k] = seq
					return err
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	events, err := stores[1].Read().EventsSince(ctx, "p", 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2*writers*writes {
		t.Fatalf("%d events, want %d", len(events), 2*writers*writes)
	}
	lastOf := map[int]int64{}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: a gap or a duplicate", i, e.Seq)
		}
		var d struct{ K, Part int }
		if err := json.Unmarshal(e.Data.(json.RawMessage), &d); err != nil {
			t.Fatal(err)
		}
		if d.Part == 1 {
			lastOf[d.K] = e.Seq
		}
	}
	for k, seq := range last {
		if lastOf[k] != seq {
			t.Fatalf("write %d: LastEventSeq said %d, its last event has seq %d", k, seq, lastOf[k])
		}
	}
	_, bound, err := stores[0].Read().EventBounds(ctx, "p")
	if err != nil || bound != int64(len(events)) {
		t.Fatalf("EventBounds: last %d, %v; want %d", bound, err, len(events))
	}
}

// TestPostgresDeadlockFailsOneWrite: two servers' writes lock two tasks in opposite
// orders; PostgreSQL cancels one to break the deadlock (40P01). That write alone fails,
// with a message that says to send it again, and leaves nothing behind; the other, and
// the rest of its batch, commit.
func TestPostgresDeadlockFailsOneWrite(t *testing.T) {
	ctx := context.Background()
	stores := twoPostgresStores(t)
	var ids [2]int64
	if err := stores[0].Write(ctx, Author{}, func(tx *Tx) error {
		if err := tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()}); err != nil {
			return err
		}
		for i := range ids {
			task := &model.Task{ProjectID: "p", Summary: "t", Status: "Backlog", Source: "user", TaskType: "standard", CreatedAt: time.Now(), UpdatedAt: time.Now()}
			if err := tx.InsertTask(ctx, task); err != nil {
				return err
			}
			ids[i] = task.ID
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Each write renames its first task, waits until the other has renamed its own,
	// then renames the other's: a cycle.
	locked := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	results := make(chan error, 2)
	for w := range 2 {
		go func() {
			results <- stores[w].Write(ctx, Author{}, func(tx *Tx) error {
				rename := func(id int64) error {
					task, err := tx.Task(ctx, "p", id, false)
					if err != nil {
						return err
					}
					task.Summary = fmt.Sprintf("by %d", w)
					return tx.UpdateTask(ctx, task)
				}
				if err := rename(ids[w]); err != nil {
					return err
				}
				close(locked[w])
				<-locked[1-w]
				return rename(ids[1-w])
			})
		}()
	}
	var failed []error
	for range 2 {
		if err := <-results; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 || !errs.IsUnavailable(failed[0]) || !strings.Contains(failed[0].Error(), "send it again") {
		t.Fatalf("write errors %v; want one, the deadlock's", failed)
	}
	// The write that went through renamed both tasks; the cancelled one left no trace.
	var by []string
	for _, id := range ids {
		task, err := stores[0].Read().Task(ctx, "p", id, false)
		if err != nil {
			t.Fatal(err)
		}
		by = append(by, task.Summary)
	}
	if by[0] != by[1] {
		t.Fatalf("summaries %q: the cancelled write left a change behind", by)
	}
}
