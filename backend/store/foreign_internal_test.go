package store

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// TestOwnCommitsKeepTheCaches: this store's own commits never empty the read caches
// whole (they forget only what they changed); another connection's commit does.
func TestOwnCommitsKeepTheCaches(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	forgot := 0
	inner := sqliteOf(s).watch.forget
	sqliteOf(s).watch.forget = func() { forgot++; inner() } // the writer is idle: set before any write below
	for i := range 20 {
		if err := s.Write(ctx, Author{}, func(tx *Tx) error {
			return tx.AppendEvent(ctx, "p", "test.own", map[string]int{"i": i}, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		sqliteOf(s).watch.check(ctx)
	}
	if forgot != 0 {
		t.Fatalf("own commits emptied the caches %d times", forgot)
	}
	commitElsewhere(t, s, `UPDATE projects SET name = 'renamed' WHERE id = 'p'`)
	sqliteOf(s).watch.check(ctx)
	sqliteOf(s).watch.check(ctx)
	if forgot != 1 {
		t.Fatalf("another connection's commit emptied the caches %d times, want once", forgot)
	}
}

// commitElsewhere runs query on a connection of its own, as another process would.
func commitElsewhere(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	other, err := sql.Open("sqlite", dsn(s.path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}
