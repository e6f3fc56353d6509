package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"sync/atomic"
	"time"
)

// Checkpoints without stalling the writer.
//
// A checkpoint copies the pages committed to the WAL back into the database file and
// fsyncs both files. SQLite's automatic checkpoint runs it inside the commit that takes
// the WAL past 1,000 pages: under a steady write load that was ~20 times a second, ~2.5 ms
// each, and every write waiting on the single writer waited with it. So the writer's
// connection has automatic checkpoints off (wal_autocheckpoint(0), see DSN), and the
// checkpointer runs PASSIVE checkpoints on a connection of the read pool while the writer
// goes on: at most one every checkpointInterval, after a commit asks for it. (A
// connection of its own cost 3 MiB more memory under the bench's load.)
//
// A PASSIVE checkpoint copies what was committed when it began; the writer has committed
// more by the time it ends. The WAL only starts over from its beginning when a write
// transaction begins with every frame copied, so once the WAL holds walRestartFrames the
// checkpointer asks the writer to finish the job: between two batches, the writer
// checkpoints the few frames committed since (finishCheckpoint), and its next batch
// writes the WAL from the start. Without that step the WAL would grow without end under a
// steady load.

const (
	checkpointInterval = 50 * time.Millisecond
	// walRestartFrames (4 KiB pages) is the WAL's size past which it is started over: as
	// SQLite's own default, which keeps the WAL at a few megabytes.
	walRestartFrames = 1000
)

// walCheckpoint runs one PASSIVE checkpoint on db and gives the WAL's size, in frames.
// It copies what no reader of an older snapshot still needs, and does nothing while
// another checkpoint runs.
func walCheckpoint(ctx context.Context, db *sql.DB) (frames int64, err error) {
	var busy bool
	var copied int64
	err = db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	return frames, err
}

// Checkpointer runs the background checkpoints of one database (NewCheckpointer).
type Checkpointer struct {
	reader, writer *sql.DB
	grew           chan struct{}
	finish         atomic.Bool // the writer finishes the next checkpoint (Written)
	end            chan struct{}
	Before         atomic.Pointer[func()] // tests: runs before each background checkpoint
}

// NewCheckpointer runs the background checkpoints on a connection of reader, the read
// pool, and asks the writer's connection writer to finish one now and then (Written),
// until stop closes.
func NewCheckpointer(reader, writer *sql.DB, stop <-chan struct{}) *Checkpointer {
	c := &Checkpointer{reader: reader, writer: writer, grew: make(chan struct{}, 1), end: make(chan struct{})}
	go c.run(stop)
	return c
}

// Wait waits for the checkpointer to end, once stop has closed.
func (c *Checkpointer) Wait() { <-c.end }

func (c *Checkpointer) run(stop <-chan struct{}) {
	defer close(c.end)
	ctx := context.Background()
	for {
		select {
		case <-stop:
			return
		case <-c.grew:
		}
		if hook := c.Before.Load(); hook != nil {
			(*hook)()
		}
		frames, err := walCheckpoint(ctx, c.reader)
		if err != nil {
			// The writer's next checkpoint, or SQLite's when the store closes, catches up.
			logCheckpointFailure(err)
		} else if frames >= walRestartFrames {
			c.finish.Store(true)
		}
		select {
		case <-stop:
			return
		case <-time.After(checkpointInterval):
		}
	}
}

// Written is called by the writer after each commit, on its connection's goroutine.
func (c *Checkpointer) Written(ctx context.Context) {
	if c.finish.CompareAndSwap(true, false) {
		// Between batches: the writer's connection is free and nothing else writes, so
		// this copies every frame, unless a reader still reads an old snapshot, and the
		// next batch starts the WAL over. A failure only leaves the WAL longer for now.
		if _, err := walCheckpoint(ctx, c.writer); err != nil {
			logCheckpointFailure(err)
		}
	}
	select {
	case c.grew <- struct{}{}:
	default:
	}
}

// logCheckpointFailure logs a failed checkpoint, unless the disk is full: the database
// file cannot grow then, and the failing writes say so once (IsFull).
func logCheckpointFailure(err error) {
	if IsFull(err) {
		slog.Debug("checkpoint failed: the disk is full", "err", err)
		return
	}
	slog.Warn("checkpoint failed", "err", err)
}
