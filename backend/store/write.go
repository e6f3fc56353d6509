package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// maxBatch bounds how many writes share one transaction.
const maxBatch = 256

// WriteStats counts the writes and the transactions (batches) that committed them, and
// how long the single writer spent running writes (Exec) and committing them (Commit).
type WriteStats struct {
	Writes, Batches int64
	Exec, Commit    time.Duration
}

// Stats reports how many writes ran and in how many batches (their ratio is the mean
// group-commit batch size), and where the writer's time went.
func (s *Store) Stats() WriteStats {
	return WriteStats{Writes: s.writes.Load(), Batches: s.batches.Load(),
		Exec: time.Duration(s.execNanos.Load()), Commit: time.Duration(s.syncNanos.Load())}
}

type job struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan error
}

// Tx is one write, inside a transaction shared with other writes of the same batch.
// Its reads see the batch's uncommitted changes.
type Tx struct {
	Reader
	events []model.Event
}

// Write runs fn in a write transaction and returns once that transaction has committed
// (or fn's error). Concurrent writes are committed together; each runs in its own
// savepoint, so one write's failure leaves the others of its batch untouched.
func (s *Store) Write(ctx context.Context, fn func(*Tx) error) error {
	j := &job{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		s.closeMu.RUnlock()
		return ctx.Err()
	}
	s.closeMu.RUnlock()
	// Once submitted, wait for the outcome even if ctx ends: the write may commit.
	return <-j.done
}

func (s *Store) writeLoop() {
	defer close(s.writerEnd)
	batch := make([]*job, 0, maxBatch)
	for {
		select {
		case j := <-s.jobs:
			batch = append(batch[:0], j)
		case <-s.stop:
			// Close holds no more submitters; drain what is queued, then end.
			for {
				select {
				case j := <-s.jobs:
					s.runBatch([]*job{j})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case j := <-s.jobs:
				batch = append(batch, j)
			default:
				break fill
			}
		}
		s.runBatch(batch)
	}
}

func (s *Store) runBatch(batch []*job) {
	ctx := context.Background()
	results := make([]error, len(batch))
	fail := func(err error) {
		for i := range batch {
			batch[i].done <- err
		}
	}
	start := time.Now()
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("begin write: %w", err))
		return
	}
	stmts := &batchStmts{tx: tx, pool: s.writeStmts, m: map[string]*sql.Stmt{}}
	defer stmts.preparePending(ctx) // after Commit or Rollback: the connection is free
	var events []model.Event
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			results[i] = err
			continue
		}
		t := &Tx{Reader: Reader{q: tx, batch: stmts}}
		err := runJob(j, t)
		if err != nil {
			if _, rbErr := tx.ExecContext(ctx, "ROLLBACK TO w"); rbErr != nil {
				_ = tx.Rollback()
				fail(fmt.Errorf("roll back a failed write: %w", rbErr))
				return
			}
		} else {
			events = append(events, t.events...)
		}
		if _, err := tx.ExecContext(ctx, "RELEASE w"); err != nil {
			_ = tx.Rollback()
			fail(fmt.Errorf("release savepoint: %w", err))
			return
		}
		results[i] = err
	}
	committing := time.Now()
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("commit: %w", err))
		return
	}
	s.execNanos.Add(int64(committing.Sub(start)))
	s.syncNanos.Add(int64(time.Since(committing)))
	s.batches.Add(1)
	s.writes.Add(int64(len(batch)))
	if len(events) > 0 && s.opts.OnCommit != nil {
		s.opts.OnCommit(events)
	}
	for i, j := range batch {
		j.done <- results[i]
	}
}

// runJob calls the job's function, turning a panic into an error so that one bad write
// cannot take the writer (and every other request) down.
func runJob(j *job, t *Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("write panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("write panicked: %v", r)
		}
	}()
	return j.fn(t)
}

// queryer is what both the read pool and a write transaction offer.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Reader runs queries, on the read pool or inside a write.
type Reader struct {
	q     queryer
	cache *stmtCache  // prepared statements of the read pool
	batch *batchStmts // prepared statements of the write batch, inside a write
}
