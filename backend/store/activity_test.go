package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
)

// TestActivityWrittenWithItsEvents: the write that appends events puts them in the
// activity trail, with each event's actor, interface and object: a read of the trail,
// which only reads, finds them at once.
func TestActivityWrittenWithItsEvents(t *testing.T) {
	pgtest.Engines(t, testActivityWrittenWithItsEvents)
}

func testActivityWrittenWithItsEvents(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	if err := s.Write(ctx, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "q", Name: "q", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	agent := audit.WithVia(audit.WithPrincipal(ctx, &auth.Principal{Kind: auth.KindAgent, ProjectID: "p", Name: "bot"}), audit.ViaREST)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(ctx context.Context, project, typ string, n int) {
		t.Helper()
		if err := s.Write(ctx, func(tx *Tx) error {
			for i := range n {
				if err := tx.AppendEvent(ctx, project, typ, map[string]int{"id": i + 1}, at); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	write(agent, "p", "task.updated", 30)
	write(ctx, "q", "heartbeat", 20)

	got, err := s.Read().Activity(ctx, ActivityFilter{ProjectID: "p", Limit: 100})
	if err != nil || len(got) != 30 {
		t.Fatalf("project p: %d entries (%v), want 30", len(got), err)
	}
	newest := got[0] // newest first
	if newest.EventSeq != 30 || newest.Action != "task.updated" || newest.ObjectType != "task" || newest.ObjectID != "30" ||
		newest.ActorKind != "agent" || newest.Actor != "bot" || newest.Via != audit.ViaREST || !newest.At.Equal(at) {
		t.Errorf("project p's newest entry: %+v", newest)
	}
	for i, a := range got {
		if a.EventSeq != int64(30-i) {
			t.Fatalf("entry %d has seq %d: the trail is not in event order", i, a.EventSeq)
		}
	}
	got, err = s.Read().Activity(ctx, ActivityFilter{ProjectID: "q", Limit: 100})
	if err != nil || len(got) != 20 || got[0].ObjectType != "heartbeat" || got[0].Actor != "system" || got[0].Via != audit.ViaInternal {
		t.Fatalf("project q: %d entries (%v), the newest %+v; want 20 by the system, object type heartbeat", len(got), err, got[0])
	}

}

// TestActivityFilledOnceAcrossStores: two stores on one PostgreSQL database stand for two
// servers, both appending events to one project. Every event must reach the trail
// exactly once.
func TestActivityFilledOnceAcrossStores(t *testing.T) {
	ctx := context.Background()
	stores := twoPostgresStores(t)
	if err := stores[0].Write(ctx, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	const appends = 150
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for _, s := range stores {
		wg.Add(1)
		go func() { // a writer
			defer wg.Done()
			for range appends {
				if err := s.WriteIn(ctx, "p", func(tx *Tx) error {
					return tx.AppendEvent(ctx, "p", "test.made", map[string]int{"id": 1}, time.Now())
				}); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	var entries, distinct int
	if err := stores[0].reader.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT event_seq) FROM activity WHERE project_id = 'p'`).Scan(&entries, &distinct); err != nil {
		t.Fatal(err)
	}
	if entries != 2*appends || distinct != 2*appends {
		t.Errorf("the trail holds %d entries of %d distinct events; want %d of %d", entries, distinct, 2*appends, 2*appends)
	}
}
