package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/store/sqlite"
)

// TestOwnCommitsKeepTheCaches: this store's own commits never empty the read caches
// whole (they forget only what they changed); another connection's commit does.
func TestOwnCommitsKeepTheCaches(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	cleared := func() uint64 { s.tokens.mu.Lock(); defer s.tokens.mu.Unlock(); return s.tokens.gen }
	before := cleared() // the watch forgets by emptying the token cache
	forgot := func() uint64 { return cleared() - before }
	for i := range 20 {
		if err := s.Write(ctx, Author{}, func(tx *Tx) error {
			return tx.AppendEvent(ctx, "p", "test.own", map[string]int{"i": i}, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		sqliteOf(s).watch.Check(ctx)
	}
	if forgot() != 0 {
		t.Fatalf("own commits emptied the caches %d times", forgot())
	}
	commitElsewhere(t, s, `UPDATE projects SET name = 'renamed' WHERE id = 'p'`)
	sqliteOf(s).watch.Check(ctx)
	sqliteOf(s).watch.Check(ctx)
	if forgot() != 1 {
		t.Fatalf("another connection's commit emptied the caches %d times, want once", forgot())
	}
}

// commitElsewhere runs query on a connection of its own, as another process would.
func commitElsewhere(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	other, err := sql.Open("sqlite", sqlite.DSN(s.path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}
