package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
)

// TestWALStartsOver: with the checkpoints out of the writer, a steady write load still
// keeps the WAL small (it starts over instead of growing with everything written), and
// every write is in the database file once the store closes.
//
// The load is paced by the checkpointer's turns, not by the clock, so that a busy
// machine (a checkpointer that waits long for the CPU or the disk) cannot fail it: each
// turn lets the writers start perTurn more writes, then waits for two more batches
// before it checkpoints. Those two batches are the writer's step after the turn before:
// the first finishes the checkpoint (finishCheckpoint), the second starts the WAL over;
// and the turn's own checkpoint cannot collide with that step. So the WAL never holds
// much more than walRestartFrames and two turns' writes (~8.5 MiB). The writers still
// have writes to make while the PASSIVE checkpoint runs, so it does not find every frame
// copied by itself: without the writer's step the WAL grows with everything written.
func TestWALStartsOver(t *testing.T) {
	ctx := context.Background()
	const writers, perWriter = 16, 150
	const perTurn = 128 // ~2 MiB of WAL
	var (
		mu      sync.Mutex
		changed = sync.NewCond(&mu)
		allowed = perTurn // writes the writers may start
		started int
		batches int
		turns   int
		done    bool // the writers are done: turns no longer wait
		expired bool // the deadline passed: nothing waits any more
	)
	s, err := Open(ctx, t.TempDir()+"/agentdesk.db", Options{OnBatch: func(int, time.Duration) {
		mu.Lock()
		batches++
		changed.Broadcast()
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	stopWaiting := func(deadline bool) {
		mu.Lock()
		done = true
		expired = expired || deadline
		changed.Broadcast()
		mu.Unlock()
	}
	t.Cleanup(func() { stopWaiting(false) }) // runs before Close, which waits for the checkpointer
	deadline := time.AfterFunc(2*time.Minute, func() { stopWaiting(true) })
	defer deadline.Stop()
	hook := func() {
		mu.Lock()
		defer mu.Unlock()
		turns++
		allowed = started + perTurn // not more: a late turn must not find more written
		changed.Broadcast()
		for from := batches; batches < from+2 && !done; {
			changed.Wait()
		}
	}
	sqliteOf(s).checkpointer.Before.Store(&hook)
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}

	details := strings.Repeat("x", 12<<10) // 3 pages a task: ~30 MB through the WAL in all
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWriter {
				mu.Lock()
				for started >= allowed && !expired {
					changed.Wait()
				}
				if expired {
					n := turns
					mu.Unlock()
					errs <- fmt.Errorf("the checkpointer took %d turns in 2 minutes", n)
					return
				}
				started++
				mu.Unlock()
				task := &model.Task{ProjectID: "p", Summary: "s", Details: details, Status: model.StatusTodo, Source: model.SourceUser, TaskType: "standard"}
				if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	stopWaiting(false)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	info, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	restarts := walRestarts(t, s.Path())
	mu.Lock()
	tookTurns := turns
	mu.Unlock()
	t.Logf("%d checkpointer turns; the WAL started over %d times, holds %d KiB", tookTurns, restarts, info.Size()>>10)
	if walMiB := info.Size() >> 20; walMiB > 12 {
		t.Fatalf("the WAL holds %d MiB after %d writes of 12 KiB (started over %d times in %d turns): it does not start over", walMiB, writers*perWriter, restarts, tookTurns)
	}

	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Fatalf("the WAL is still there after Close (%v): the last checkpoint did not run", err)
	}
	db, err := sql.Open("sqlite", sqlite.DSN(path, false, "FULL", true))
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

// walRestarts reads how many times the WAL of the database at path has started over: the
// checkpoint sequence number in its header (https://sqlite.org/fileformat2.html#walformat).
func walRestarts(t *testing.T, path string) uint32 {
	t.Helper()
	f, err := os.Open(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var header [32]byte
	if _, err := io.ReadFull(f, header[:]); err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint32(header[12:16])
}
