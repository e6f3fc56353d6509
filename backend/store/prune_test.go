package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPruneByAge: events and activity are pruned in rowid order; what expired goes,
// however many batches it takes, and nothing newer than the cut does.
func TestPruneByAge(t *testing.T) { pgtest.Engines(t, testPruneByAge) }

func testPruneByAge(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 25_000 // more than one batch of each prune
	appendEventsSecondApart(t, s, n, start)
	cut := start.Add(21_000 * time.Second) // the first 21,000 have expired
	var gone int64
	if err := s.Write(ctx, Author{}, func(tx *Tx) (err error) {
		gone, err = tx.PruneEvents(ctx, cut)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	first, last, err := s.Read().EventBounds(ctx, "p")
	if err != nil || gone != 21_000 || first != 21_001 || last != n {
		t.Fatalf("pruned %d events (%v); left seqs %d..%d, want 21,000 gone and 21001..%d left", gone, err, first, last, n)
	}

	// Activity, in passes of at most 5,000 as the service runs them.
	var passes []int64
	for {
		var k int64
		if err := s.Write(ctx, Author{}, func(tx *Tx) (err error) {
			k, err = tx.PruneActivity(ctx, cut, 5000)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		passes = append(passes, k)
		if k < 5000 {
			break
		}
	}
	var left int
	var oldest string
	if err := s.Read().queryRow(ctx, `SELECT COUNT(*), MIN(at) FROM activity`).Scan(&left, &oldest); err != nil {
		t.Fatal(err)
	}
	if left != n-21_000 || parseTime(oldest) != cut {
		t.Fatalf("activity: passes %v left %d entries, the oldest at %s; want %d left from %s", passes, left, oldest, n-21_000, cut)
	}
}

// TestPruneEventsBatchBounded: one batch forgets at most limit events, the oldest, so
// that the server's pass (events.Hub.PruneEvents, a batch a write) never holds the
// writer for more than limit rows; fewer than limit gone means the expired ones are
// done; the expired ones not yet in the activity trail are copied there first.
func TestPruneEventsBatchBounded(t *testing.T) { pgtest.Engines(t, testPruneEventsBatchBounded) }

func testPruneEventsBatchBounded(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 12_000
	appendEventsSecondApart(t, s, n, start)
	cut := start.Add(11_000 * time.Second) // the first 11,000 have expired
	var passes []int64
	for {
		var k int64
		if err := s.Write(ctx, Author{}, func(tx *Tx) (err error) {
			k, err = tx.PruneEventsBatch(ctx, cut, 5000)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		passes = append(passes, k)
		if k < 5000 || len(passes) > 10 {
			break
		}
	}
	if len(passes) != 3 || passes[0] != 5000 || passes[1] != 5000 || passes[2] != 1000 {
		t.Fatalf("batches of at most 5,000 forgot %v events, want [5000 5000 1000]", passes)
	}
	first, last, err := s.Read().EventBounds(ctx, "p")
	if err != nil || first != 11_001 || last != n {
		t.Fatalf("left seqs %d..%d (%v), want 11001..%d", first, last, err, n)
	}
	var copied int
	if err := s.Read().queryRow(ctx, `SELECT COUNT(*) FROM activity`).Scan(&copied); err != nil || copied != n {
		t.Fatalf("%d events in the activity trail (%v), want all %d copied before any went", copied, err, n)
	}
}

// appendEventsSecondApart writes n events to project p, a second apart from start.
func appendEventsSecondApart(t *testing.T, s *Store, n int, start time.Time) {
	t.Helper()
	ctx := context.Background()
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		for i := range n {
			if err := tx.AppendEvent(ctx, "p", "test.event", map[string]int{"id": i + 1}, start.Add(time.Duration(i)*time.Second)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
