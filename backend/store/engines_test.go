package store

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

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
	if err := stores[0].Write(ctx, func(tx *Tx) error {
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
				errs <- s.Write(ctx, func(tx *Tx) error {
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
