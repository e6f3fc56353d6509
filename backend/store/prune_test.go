package store

import (
	"context"
	"testing"
	"time"
)

// TestPruneByAge: events and activity are pruned in rowid order; what expired goes,
// however many batches it takes, and nothing newer than the cut does.
func TestPruneByAge(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 25_000 // more than one batch of each prune
	if err := s.Write(ctx, func(tx *Tx) error {
		for i := range n {
			if err := tx.AppendEvent(ctx, "p", "test.event", map[string]int{"id": i + 1}, start.Add(time.Duration(i)*time.Second)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cut := start.Add(21_000 * time.Second) // the first 21,000 have expired
	var gone int64
	if err := s.Write(ctx, func(tx *Tx) (err error) {
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
		if err := s.Write(ctx, func(tx *Tx) (err error) {
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
