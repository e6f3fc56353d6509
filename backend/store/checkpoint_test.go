package store

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestWALStartsOver: with the checkpoints out of the writer, a steady write load still
// keeps the WAL small (it starts over instead of growing with everything written), and
// every write is in the database file once the store closes.
func TestWALStartsOver(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	const writers, perWriter = 16, 150
	details := strings.Repeat("x", 12<<10) // 3 pages a task: ~30 MB through the WAL in all
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWriter {
				task := &model.Task{ProjectID: "p", Summary: "s", Details: details, Status: model.StatusTodo, Source: model.SourceUser, TaskType: "standard"}
				if err := s.Write(ctx, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if s.Stats().Batches < 100 {
		t.Fatalf("only %d batches: too few commits for the checkpointer to take turns", s.Stats().Batches)
	}
	info, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if walMiB := info.Size() >> 20; walMiB > 12 {
		t.Fatalf("the WAL holds %d MiB after ~30 MiB of writes: it never started over", walMiB)
	}

	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Fatalf("the WAL is still there after Close (%v): the last checkpoint did not run", err)
	}
	db, err := sql.Open("sqlite", dsn(path, false, "FULL", true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	var check string
	if err := db.QueryRow(`SELECT count(*) FROM tasks`).Scan(&n); err != nil || n != writers*perWriter {
		t.Fatalf("%d tasks in the database file (err %v), want %d", n, err, writers*perWriter)
	}
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q (err %v)", check, err)
	}
}
