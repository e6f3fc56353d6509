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

// TestIndexActivity: the activity trail is filled from the event log, project by
// project, in passes of the given size, with each event's actor, interface and object;
// events pruned before they were copied leave no entry and no hole in the count.
func TestIndexActivity(t *testing.T) { pgtest.Engines(t, testIndexActivity) }

func testIndexActivity(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "q", Name: "q", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	agent := Author{Project: "p", Actor: audit.Actor{Kind: string(auth.KindAgent), Name: "bot", Via: audit.ViaREST}}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(by Author, project, typ string, n int) {
		t.Helper()
		if err := s.Write(ctx, by, func(tx *Tx) error {
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
	write(Author{}, "q", "heartbeat", 20)

	behind, err := s.Read().ActivityBehind(ctx)
	if err != nil || !behind {
		t.Fatalf("ActivityBehind = %v, %v after 50 events; want true", behind, err)
	}
	var passes []bool
	for more := true; more; {
		if err := s.Write(ctx, Author{}, func(tx *Tx) (err error) {
			more, err = tx.IndexActivity(ctx, 12)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		passes = append(passes, more)
	}
	if len(passes) != 5 { // 50 events, 12 a pass
		t.Errorf("%d passes of 12 for 50 events: %v", len(passes), passes)
	}
	if behind, err := s.Read().ActivityBehind(ctx); err != nil || behind {
		t.Fatalf("ActivityBehind = %v, %v once filled; want false", behind, err)
	}

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

	// Events gone before they were copied: the trail skips them and is not behind.
	write(Author{}, "q", "task.created", 5)
	if _, err := s.writer.Exec(`DELETE FROM events WHERE project_id = 'q' AND seq <= 23`); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { _, err := tx.IndexActivity(ctx, 0); return err }); err != nil {
		t.Fatal(err)
	}
	got, err = s.Read().Activity(ctx, ActivityFilter{ProjectID: "q", ObjectType: "task", Limit: 100})
	if err != nil || len(got) != 2 || got[0].EventSeq != 25 || got[1].EventSeq != 24 {
		t.Fatalf("after a prune: %d task entries (%v), want seqs 25 and 24", len(got), err)
	}
	if behind, err := s.Read().ActivityBehind(ctx); err != nil || behind {
		t.Fatalf("ActivityBehind = %v, %v; want false", behind, err)
	}
}

// TestActivityFilledOnceAcrossStores: two stores on one PostgreSQL database stand for two
// servers, each filling the activity trail (IndexActivity) while both append events to
// one project. Every event must reach the trail exactly once: both used to copy the
// same events when they filled it at the same moment.
func TestActivityFilledOnceAcrossStores(t *testing.T) {
	ctx := context.Background()
	stores := twoPostgresStores(t)
	if err := stores[0].Write(ctx, Author{}, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	const appends = 150
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errc := make(chan error, 8)
	for _, s := range stores {
		wg.Add(2)
		go func() { // a writer
			defer wg.Done()
			for range appends {
				if err := s.Write(ctx, Author{Project: "p"}, func(tx *Tx) error {
					return tx.AppendEvent(ctx, "p", "test.made", map[string]int{"id": 1}, time.Now())
				}); err != nil {
					errc <- err
					return
				}
			}
		}()
		go func() { // a filler, as the server's background runner
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := s.Write(ctx, Author{}, func(tx *Tx) error { _, err := tx.IndexActivity(ctx, 0); return err }); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	go func() {
		for range 2 * appends { // the writers are done when the project has every event
			var n int
			if err := stores[0].reader.QueryRowContext(ctx, `SELECT event_seq FROM projects WHERE id = 'p'`).Scan(&n); err == nil && n == 2*appends {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(stop)
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if err := stores[1].Write(ctx, Author{}, func(tx *Tx) error { _, err := tx.IndexActivity(ctx, 0); return err }); err != nil {
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
