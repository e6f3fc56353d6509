package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/model"
)

// maxBatch bounds how many writes share one transaction.
const maxBatch = 256

// WriteStats counts the writes and the transactions (batches) that committed them, and
// how long the single writer spent running writes (Exec, not counting its waits for the
// next write or for the syncer) and committing them (Commit); and the fsyncs that made
// them durable (Syncs, taking Sync in all).
type WriteStats struct {
	Writes, Batches, Syncs int64
	Exec, Commit, Sync     time.Duration
}

// Stats reports how many writes ran and in how many batches (their ratio is the mean
// group-commit batch size), and where the writer's time went.
func (s *Store) Stats() WriteStats {
	return WriteStats{Writes: s.writes.Load(), Batches: s.batches.Load(), Syncs: s.syncs.Load(),
		Exec: time.Duration(s.execNanos.Load()), Commit: time.Duration(s.commitNanos.Load()),
		Sync: time.Duration(s.syncNanos.Load())}
}

// Author is who makes a write, and the project it changes: every event the write
// appends records the actor (activity.go), and on PostgreSQL the write takes the
// project's lock before it runs (postgres_seq.go). The zero Author is the system, in no
// one project.
type Author struct {
	Project string
	Actor   audit.Actor
}

type job struct {
	ctx  context.Context
	by   Author
	fn   func(*Tx) error
	done chan error
	// Its batch changed a token: set by the writer before the write is answered.
	credentialsMoved bool
	// It made events (and was not rolled back): set by the writer before it is answered.
	madeEvents bool
}

// By is who makes the write, and its project.
func (t *Tx) By() Author { return t.by }

// Tx is one write: on SQLite inside a transaction shared with the other writes of its
// batch (its reads see their uncommitted changes), on PostgreSQL a transaction of its
// own (pgwrite.go).
type Tx struct {
	Reader
	b      *batch
	by     Author
	events []model.Event
	audit  []eventAudit // who made each event, and its object (activity.go)
}

// Write runs fn in a write transaction and returns once that transaction has committed
// and is durable (or fn's error). fn runs once. On SQLite concurrent writes are
// committed together by the single writer, each in a savepoint of its own, so that one
// write's failure leaves the others of its batch untouched; on PostgreSQL each write is
// a transaction of its own, run here (pgwrite.go).
func (s *Store) Write(ctx context.Context, by Author, fn func(*Tx) error) error {
	j := &job{ctx: ctx, by: by, fn: fn, done: make(chan error, 1)}
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	if err := s.Stopped(); err != nil {
		s.closeMu.RUnlock()
		return err
	}
	err := s.eng.submit(j) // Close waits for what is submitted: closeMu is held
	s.closeMu.RUnlock()
	if err != nil {
		return err
	}
	// Once submitted, wait for the outcome even if ctx ends: the write may commit.
	err = <-j.done
	s.waitForOtherServers(j)
	if err == nil && j.madeEvents && s.opts.AwaitDelivery != nil {
		s.opts.AwaitDelivery(ctx) // its events are on their way to every stream
	}
	return err
}

// waitForOtherServers holds the answer to a write that changed a token (credcache.go):
// other processes' token caches notice its commit within foreignLookEvery, so answered
// no sooner, a revocation counts everywhere once its caller hears of it. The caller
// waits; the writer goes on.
func (s *Store) waitForOtherServers(j *job) {
	if j.credentialsMoved {
		time.Sleep(foreignLookEvery)
	}
}

func (s *sqliteEngine) writeLoop() {
	defer close(s.committed) // the syncer acknowledges what is left, then ends
	for {
		select {
		case j := <-s.jobs:
			s.writeBatches(j)
		case <-s.stop:
			// Close holds no more submitters; write what is queued, then end.
			for {
				select {
				case j := <-s.jobs:
					s.writeBatches(j)
				default:
					return
				}
			}
		}
	}
}

// writeBatches writes first and what is queued after it, and then the writes a batch
// put back, until none is left.
func (s *sqliteEngine) writeBatches(first *job) {
	for queue := []*job{first}; len(queue) > 0; {
		queue = s.writeBatch(queue)
	}
}

// batch is a write transaction and the writes it holds: on SQLite the single writer's,
// many writes; on PostgreSQL one write's (pgwrite.go).
type batch struct {
	// Where the writes' statements run: the transaction tx on SQLite; on PostgreSQL
	// the connection conn, where the write sends BEGIN and COMMIT itself, together
	// with other statements (pgwrite.go).
	q        queryer
	tx       *sql.Tx
	postgres *pgTransaction // PostgreSQL only
	stmts    *batchStmts
	jobs     []*job
	results  []error
	events   []model.Event
	audit    []eventAudit     // one per event
	seqs     map[string]int64 // project -> last event seq given in this batch
	queue    []*job           // writes to run before those of the channel
	// The count of token changes moved (read before the commit on SQLite, with it on
	// PostgreSQL): the writes are acknowledged foreignLookEvery later (credcache.go).
	credentialsMoved bool
}

// writeBatch runs the writes of queue and those queued after them in one transaction
// (SQLite), and returns those of queue it had no room for. It commits once no write is
// waiting and the syncer is ready for more, or the batch is full: while the syncer
// waits for the disk, the batch grows, and one commit and one fsync serve every write
// that came meanwhile.
func (s *sqliteEngine) writeBatch(queue []*job) (rest []*job) {
	ctx := context.Background()
	if err := s.Stopped(); err != nil { // queued before the failure
		failJobs(queue, err)
		return nil
	}
	start := time.Now()
	b := &batch{seqs: map[string]int64{}, queue: queue}
	var err error
	if b.tx, err = s.writer.BeginTx(ctx, nil); err != nil {
		failJobs(queue, s.batchError(fmt.Errorf("begin write: %w", err)))
		return nil
	}
	b.q = b.tx
	b.stmts = &batchStmts{tx: b.tx, pool: s.writeStmts, m: map[string]*sql.Stmt{}}
	defer b.stmts.preparePending(ctx) // after Commit or Rollback: the connection is free
	// A batch that fails (a full disk, say) never reaches the syncer, which therefore
	// never says again that it is ready: the ready signal this batch may have taken is
	// given back, or the next batch would wait for it forever.
	handedOver := false
	defer func() {
		if !handedOver {
			select {
			case s.syncReady <- struct{}{}:
			default:
			}
		}
	}()
	for j := b.next(); ; {
		if err := b.run(ctx, j); err != nil {
			b.fail(s.batchError(err))
			return b.queue
		}
		if len(b.jobs) == maxBatch {
			break
		}
		if j = b.next(); j != nil {
			continue
		}
		select {
		case j = <-s.jobs:
			continue
		default:
		}
		waiting := time.Now() // idle, not counted as the writer's work
		select {
		case j = <-s.jobs:
		case <-s.syncReady:
			j = nil
		}
		start = start.Add(time.Since(waiting))
		if j == nil {
			break
		}
	}
	if err := b.flushEvents(ctx); err != nil { // events.go
		b.fail(s.batchError(err))
		return b.queue
	}
	if err := s.Stopped(); err != nil { // the syncer failed while this batch ran
		b.fail(err)
		return b.queue
	}
	// The writer connection's data_version, for telling other processes' commits from
	// this one (sqlite.Watch), and the count of token changes (credcache.go).
	var writerVersion, credChanges int64
	r := Reader{q: b.tx, batch: b.stmts, sql: sqliteSQL}
	if err := r.queryRow(ctx, `PRAGMA data_version`).Scan(&writerVersion); err != nil {
		b.fail(s.batchError(fmt.Errorf("read data_version: %w", err)))
		return b.queue
	}
	if credChanges, err = credentialChanges(ctx, r); err != nil {
		b.fail(s.batchError(fmt.Errorf("read the count of token changes: %w", err)))
		return b.queue
	}
	prevSeqs := s.horizon.committing(b.seqs) // durable.go
	committing := time.Now()
	if err := s.watch.Commit(ctx, b.tx, s.writer, writerVersion); err != nil { // package sqlite's Watch
		// Let the read caches forget whatever the batch may have changed.
		s.horizon.restore(prevSeqs)
		s.tokens.clear()
		if IsDiskFull(err) {
			// Not committed, as SQLite rolled it back (diskfull.go: 507): go on.
			b.fail(s.batchError(err))
			return b.queue
		}
		// Whether any of it is stored is unknown: stop (failstop.go).
		s.failStop(fmt.Errorf("commit: %w", err))
		b.fail(s.unknownOutcome())
		return b.queue
	}
	s.noteCommitted() // diskfull.go
	b.credentialsMoved = s.sawCredentialChanges(credChanges, committing)
	for _, j := range b.jobs {
		j.credentialsMoved = b.credentialsMoved
	}
	s.counted(len(b.jobs), start, committing)
	handedOver = true
	s.committed <- committed{batch: b.jobs, results: b.results, events: b.events}
	s.checkpointer.Written(ctx)
	return b.queue
}

// counted adds a committed transaction of writes writes to the stats: it began at
// start, and its COMMIT at committing.
func (s *Store) counted(writes int, start, committing time.Time) {
	commitTook := time.Since(committing)
	s.execNanos.Add(int64(committing.Sub(start)))
	s.commitNanos.Add(int64(commitTook))
	if s.opts.OnBatch != nil {
		s.opts.OnBatch(writes, commitTook)
	}
	s.batches.Add(1)
	s.writes.Add(int64(writes))
}

// next takes the next write of the batch's queue, or nil.
func (b *batch) next() *job {
	if len(b.queue) == 0 {
		return nil
	}
	j := b.queue[0]
	b.queue = b.queue[1:]
	return j
}

// run adds one write to the batch, in a savepoint: a write that fails is rolled back to
// it and leaves the others untouched. An error return means the whole batch is lost.
func (b *batch) run(ctx context.Context, j *job) error {
	if err := j.ctx.Err(); err != nil {
		b.jobs = append(b.jobs, j)
		b.results = append(b.results, err)
		return nil
	}
	// What a failed write leaves as it was.
	seqs := maps.Clone(b.seqs)
	// The savepoint statements are prepared once, like the writes' own (stmts.go).
	r := Reader{q: b.tx, batch: b.stmts, sql: sqliteSQL}
	if _, err := r.exec(ctx, "SAVEPOINT w"); err != nil {
		b.jobs = append(b.jobs, j)
		b.results = append(b.results, err)
		return nil
	}
	b.jobs = append(b.jobs, j)
	b.results = append(b.results, nil)
	result := &b.results[len(b.results)-1]
	t := &Tx{Reader: r, b: b, by: j.by}
	err := runJob(j, t)
	if err != nil && IsDiskFull(err) {
		// SQLite may have rolled the whole transaction back: the batch goes (diskfull.go).
		return err
	}
	if err != nil {
		if _, rbErr := r.exec(ctx, "ROLLBACK TO w"); rbErr != nil {
			return fmt.Errorf("roll back a failed write: %w", rbErr)
		}
		// Its events are not stored: their numbers are given again.
		b.seqs = seqs
	} else {
		b.events = append(b.events, t.events...)
		b.audit = append(b.audit, t.audit...)
	}
	j.madeEvents = err == nil && len(t.events) > 0
	*result = err
	if _, err := r.exec(ctx, "RELEASE w"); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// batchError is what the writes of a batch that failed with err are told: 507 when the
// disk is full (diskfull.go), err otherwise.
func (s *Store) batchError(err error) error {
	if isDeadlock(err) {
		return errDeadlock
	}
	if IsDiskFull(err) {
		s.noteDiskFull(err)
		return errDiskFull
	}
	return err
}

// fail rolls the batch back and gives every write of it err (SQLite).
func (b *batch) fail(err error) {
	_ = b.tx.Rollback()
	failJobs(b.jobs, err)
}

// failJobs gives each write err.
func failJobs(jobs []*job, err error) {
	for _, j := range jobs {
		j.done <- err
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
	cache *stmtCache  // prepared statements of the read pool (SQLite)
	batch *batchStmts // prepared statements of the write batch, inside a write (SQLite)
	// On the read pool: how far event reads may go (durable.go), and the count of
	// queries run (querycount.go).
	horizon *eventHorizon
	queries *atomic.Int64
	// The SQL that differs between the engines (dialect.go).
	sql *dialect
}
