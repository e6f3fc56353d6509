package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPostgresEventSeqAcrossInstances: two pools on one database stand for two servers.
// Eight writers append events to three projects in batches (each batch touching one to
// three projects, in random order, several events each) while a reader on each pool
// follows every project with "seq > last": every read must continue exactly at last+1
// and be gapless (a reader that saw n+1 before n would miss n for good), no batch may
// fail (no duplicate seq, no deadlock), and in the end every event is there.
func TestPostgresEventSeqAcrossInstances(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	first, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	projects := []string{"p1", "p2", "p3"}
	for _, p := range projects {
		if _, err := first.ExecContext(ctx, `INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ($1, $1, 'default', 's', '')`, p); err != nil {
			t.Fatal(err)
		}
	}

	const writers, batches = 8, 40
	var written atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		db := []*sql.DB{first, second}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range batches {
				touched := rng.Perm(len(projects))[:1+rng.IntN(len(projects))]
				counts := map[string]int64{}
				var names []string
				for _, i := range touched {
					names = append(names, projects[i])
					counts[projects[i]] = int64(1 + rng.IntN(3))
				}
				if err := appendEvents(ctx, db, names, counts, false); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				for _, n := range counts {
					written.Add(n)
				}
			}
		}()
	}
	var readers sync.WaitGroup
	var seen atomic.Int64
	for _, db := range []*sql.DB{first, second} {
		for _, p := range projects {
			readers.Add(1)
			go func() {
				defer readers.Done()
				var last int64
				for final := false; ; {
					select {
					case <-done:
						final = true
					default:
					}
					rows, err := db.QueryContext(ctx, `SELECT seq FROM events WHERE project_id = $1 AND seq > $2 ORDER BY seq`, p, last)
					if err != nil {
						t.Error(err)
						return
					}
					for rows.Next() {
						var seq int64
						if err := rows.Scan(&seq); err != nil {
							t.Error(err)
						}
						if seq != last+1 {
							t.Errorf("%s: read seq %d after %d: seq %d is missed", p, seq, last, last+1)
						}
						last = seq
					}
					rows.Close()
					if final {
						seen.Add(last)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(done)
	readers.Wait()
	if t.Failed() {
		return
	}
	var stored int64
	if err := first.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != written.Load() || seen.Load() != 2*written.Load() {
		t.Errorf("%d events written, %d stored, %d read by the two instances' readers (want twice as many)", written.Load(), stored, seen.Load())
	}
	t.Logf("%d events in %d batches", stored, writers*batches)
}

// appendEvents is what a batch does on PostgreSQL: lock each project and read its last
// seq (batch.run, Tx.projectSeq), insert, advance event_seq (flushEvents), then (with notify, as the writer does) NOTIFY the other
// servers, and commit.
func appendEvents(ctx context.Context, db *sql.DB, projects []string, counts map[string]int64, notify bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The writer takes a project's lock as the batch's first write of it begins, and
	// puts a write whose lock deadlocks back; here, locks in key order never deadlock.
	sorted := slices.SortedFunc(slices.Values(projects), func(a, b string) int { return cmp.Compare(ProjectLockKey(a), ProjectLockKey(b)) })
	last := map[string]int64{}
	for _, p := range sorted {
		if _, err := tx.ExecContext(ctx, LockProjectSQL(p)); err != nil {
			return err
		}
		var seq int64
		// Read committed: this statement sees the last seq of the batch that held the lock.
		if err := tx.QueryRowContext(ctx, `SELECT event_seq FROM projects WHERE id = $1`, p).Scan(&seq); err != nil {
			return err
		}
		last[p] = seq
	}
	for _, p := range projects {
		for i := range counts[p] {
			if _, err := tx.ExecContext(ctx, `INSERT INTO events (project_id, seq, type, data, at) VALUES ($1, $2, 'test', '\x7b7d', '')`, p, last[p]+1+i); err != nil {
				return fmt.Errorf("insert event: %w", err)
			}
		}
		last[p] += counts[p]
		if _, err := tx.ExecContext(ctx, `UPDATE projects SET event_seq = $1 WHERE id = $2`, last[p], p); err != nil {
			return err
		}
	}
	if notify {
		if _, err := notifyEvents(ctx, tx, last); err != nil {
			return err
		}
	}
	return tx.Commit()
}
