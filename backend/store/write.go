package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"time"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/jackc/pgx/v5"
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
	// Times it was put back because waiting for its project's lock deadlocked
	// (PostgreSQL; batch.lockFailed).
	retries int
	// Its batch changed a token: set by the writer before the write is answered.
	credentialsMoved bool
}

// maxLockRetries bounds how often a write goes back after its project's lock
// deadlocked; then it fails with errDeadlock.
const maxLockRetries = 3

// By is who makes the write, and its project.
func (t *Tx) By() Author { return t.by }

// Tx is one write, inside a transaction shared with other writes of the same batch.
// Its reads see the batch's uncommitted changes.
type Tx struct {
	Reader
	b      *batch
	by     Author
	events []model.Event
	audit  []eventAudit // who made each event, and its object (activity.go)
}

// Write runs fn in a write transaction and returns once that transaction has committed
// and is durable (or fn's error). Concurrent writes are committed together, each in a
// savepoint of its own, so that one write's failure leaves the others of its batch
// untouched. fn runs once.
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
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		s.closeMu.RUnlock()
		return ctx.Err()
	}
	s.closeMu.RUnlock()
	// Once submitted, wait for the outcome even if ctx ends: the write may commit.
	err := <-j.done
	if j.credentialsMoved {
		// A token changed (credcache.go). Other processes' token caches notice this
		// commit within foreignLookEvery: answered no sooner, a revocation counts
		// everywhere once its caller hears of it. The caller waits; the writer goes on.
		time.Sleep(foreignLookEvery)
	}
	return err
}

func (s *Store) writeLoop() {
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
func (s *Store) writeBatches(first *job) {
	for queue := []*job{first}; len(queue) > 0; {
		queue = s.writeBatch(queue)
	}
}

// batch is the writer's open transaction and the writes it holds.
type batch struct {
	pg bool // on PostgreSQL (the Store's pg)
	// Where the writes' statements run: the transaction tx on SQLite; on PostgreSQL
	// the connection conn, where the batch sends BEGIN and COMMIT itself, together
	// with other statements (pgpipeline.go).
	q    queryer
	tx   *sql.Tx
	conn *sql.Conn
	pool *sql.DB // PostgreSQL: the writer's pool, conn's
	// PostgreSQL: BEGIN was sent (it may have run), and the transaction's id as read
	// right after it, for postgresOutcome.
	begun       bool
	xid         string
	reconnected bool // PostgreSQL: conn replaced one found closed (batch.reconnect)
	stmts       *batchStmts
	jobs        []*job
	results     []error
	events      []model.Event
	audit       []eventAudit     // one per event
	seqs        map[string]int64 // project -> last event seq given in this batch
	// PostgreSQL: the projects whose lock the batch holds, each with its last event seq
	// as read under the lock (or notRead), which b.seqs overrides once the batch has
	// numbered events of the project (Tx.projectSeq).
	locked    map[string]int64
	savepoint bool   // PostgreSQL: savepoint w is there (batch.run)
	queue     []*job // writes to run before those of the channel
	again     []*job // writes put back for the next batch, not run (beginPostgres)
	// The count of token changes moved (read before the commit on SQLite, with it on
	// PostgreSQL): the writes are acknowledged foreignLookEvery later (credcache.go).
	credentialsMoved bool
}

// writeBatch runs the writes of queue and those queued after them in one transaction,
// and returns the writes it put back for the next batch (batch.run). It commits once no
// write is waiting and the syncer is ready for more, or the batch is full: while the
// syncer waits for the disk, the batch grows, and one commit and one fsync serve every
// write that came meanwhile.
func (s *Store) writeBatch(queue []*job) (again []*job) {
	ctx := context.Background()
	if err := s.Stopped(); err != nil { // queued before the failure
		failJobs(queue, err)
		return nil
	}
	start := time.Now()
	b := &batch{pg: s.pg, seqs: map[string]int64{}, queue: queue}
	var err error
	if s.pg {
		// BEGIN goes with the first write's statements (batch.beginPostgres).
		b.pool = s.writer
		b.conn, err = s.writer.Conn(ctx)
		b.q = b.conn
		b.locked = map[string]int64{} // SQLite has one writer: no project locks
	} else {
		b.tx, err = s.writer.BeginTx(ctx, nil)
		b.q = b.tx
	}
	if err != nil {
		failJobs(queue, s.batchError(fmt.Errorf("begin write: %w", err)))
		return nil
	}
	b.stmts = &batchStmts{tx: b.tx, pool: s.writeStmts, m: map[string]*sql.Stmt{}}
	defer b.stmts.preparePending(ctx) // after Commit or Rollback: the connection is free
	if b.conn != nil {
		// Runs first: gives the connection back to the writer's pool.
		defer func() { b.conn.Close() }()
	}
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
			return b.putBack()
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
	if !s.pg { // PostgreSQL stores them as it commits (commitPostgres)
		if err := b.flushEvents(ctx); err != nil { // events.go
			b.fail(s.batchError(err))
			return b.putBack()
		}
	}
	if err := s.Stopped(); err != nil { // the syncer failed while this batch ran
		b.fail(err)
		return b.putBack()
	}
	// The writer connection's data_version, for telling other processes' commits from
	// this one (foreign.go), and the count of token changes (credcache.go); SQLite's only.
	var writerVersion, credChanges int64
	if !s.pg {
		r := Reader{q: b.tx, batch: b.stmts}
		if err := r.queryRow(ctx, `PRAGMA data_version`).Scan(&writerVersion); err != nil {
			b.fail(s.batchError(fmt.Errorf("read data_version: %w", err)))
			return b.putBack()
		}
		var err error
		if credChanges, err = credentialChanges(ctx, r); err != nil {
			b.fail(s.batchError(fmt.Errorf("read the count of token changes: %w", err)))
			return b.putBack()
		}
	}
	prevSeqs := s.horizon.committing(b.seqs) // durable.go
	committing := time.Now()
	if err := s.commit(ctx, b, writerVersion); err != nil {
		// Let the read caches forget whatever the batch may have changed.
		s.horizon.restore(prevSeqs)
		s.tokens.clear()
		var refused notCommitted
		if errors.As(err, &refused) {
			// PostgreSQL refused a statement before the COMMIT, which did not run.
			b.fail(s.batchError(refused.err))
			return b.putBack()
		}
		if IsDiskFull(err) || errors.Is(err, errRolledBack) {
			// Not committed, as SQLite rolled it back (diskfull.go: 507), or as
			// PostgreSQL says it rolled it back (pgoutcome.go: 503): go on.
			b.fail(s.batchError(err))
			return b.putBack()
		}
		// Whether any of it is stored is unknown: stop (failstop.go).
		s.failStop(fmt.Errorf("commit: %w", err))
		b.fail(s.unknownOutcome())
		return b.putBack()
	}
	s.noteCommitted() // diskfull.go
	if !s.pg {        // PostgreSQL read the count with its COMMIT (commitPostgres)
		b.credentialsMoved = s.sawCredentialChanges(credChanges, committing)
	}
	for _, j := range b.jobs {
		j.credentialsMoved = b.credentialsMoved
	}
	commitTook := time.Since(committing)
	s.execNanos.Add(int64(committing.Sub(start)))
	s.commitNanos.Add(int64(commitTook))
	if s.opts.OnBatch != nil {
		s.opts.OnBatch(len(b.jobs), commitTook)
	}
	s.batches.Add(1)
	s.writes.Add(int64(len(b.jobs)))
	handedOver = true
	s.committed <- committed{batch: b.jobs, results: b.results, events: b.events}
	if !s.pg {
		s.walWritten(ctx) // checkpoint.go
	}
	return b.putBack()
}

// commit commits the batch's transaction: on SQLite through the data_version watch
// (foreign.go), on PostgreSQL with its events (commitPostgres).
func (s *Store) commit(ctx context.Context, b *batch, writerVersion int64) error {
	if s.pg {
		if hook := s.beforeCommit.Swap(nil); hook != nil {
			(*hook)()
		}
		return s.commitPostgres(ctx, b)
	}
	return s.watch.commit(ctx, b.tx, s.writer, writerVersion)
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
// (PostgreSQL: runPostgres.)
func (b *batch) run(ctx context.Context, j *job) error {
	if err := j.ctx.Err(); err != nil {
		b.jobs = append(b.jobs, j)
		b.results = append(b.results, err)
		return nil
	}
	if b.pg {
		return b.runPostgres(ctx, j)
	}
	// What a failed write leaves as it was.
	seqs, locked := maps.Clone(b.seqs), maps.Clone(b.locked)
	// The savepoint statements are prepared once, like the writes' own (stmts.go).
	r := Reader{q: b.tx, batch: b.stmts}
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
		b.seqs, b.locked = seqs, locked
	} else {
		b.events = append(b.events, t.events...)
		b.audit = append(b.audit, t.audit...)
	}
	*result = err
	if _, err := r.exec(ctx, "RELEASE w"); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// runPostgres is run on PostgreSQL. As on SQLite, the write runs in a savepoint of its
// own, opened with its project's lock in one round trip (beginPostgres); when it fails,
// the batch rolls back to that savepoint, and the write's error is its answer.
func (b *batch) runPostgres(ctx context.Context, j *job) error {
	seqs, locked := maps.Clone(b.seqs), maps.Clone(b.locked)
	again, err := b.beginPostgres(ctx, j)
	if err != nil {
		b.jobs = append(b.jobs, j) // the batch fails, and j with it
		b.results = append(b.results, err)
		return err
	}
	if again {
		return nil // j did not run: it goes to the next batch
	}
	r := Reader{q: b.q, batch: b.stmts, pg: true} // after beginPostgres: b.q may be new
	t := &Tx{Reader: r, b: b, by: j.by}
	err = runJob(j, t)
	if err == nil {
		b.jobs = append(b.jobs, j)
		b.results = append(b.results, nil)
		b.events = append(b.events, t.events...)
		b.audit = append(b.audit, t.audit...)
		return nil
	}
	if _, rbErr := r.exec(ctx, "ROLLBACK TO w"); rbErr != nil {
		b.jobs = append(b.jobs, j) // the batch fails, and j with it
		b.results = append(b.results, rbErr)
		return fmt.Errorf("roll back a failed write: %w", rbErr)
	}
	// Its events are not stored: their numbers are given again; a lock it took is gone.
	b.seqs, b.locked = seqs, locked
	b.answer(j, err)
	return nil
}

// answer records a failed write's outcome.
func (b *batch) answer(j *job, err error) {
	if isDeadlock(err) {
		err = errDeadlock // the others of the batch go on
	}
	b.jobs = append(b.jobs, j)
	b.results = append(b.results, err)
}

// beginPostgres opens the write's savepoint on PostgreSQL, releasing the previous
// write's, and takes the lock of the write's project (postgres_seq.go) unless the
// batch holds it, reading the project's last seq under it: all in one round trip
// (pgpipeline.go). The batch's first write waits for the lock: the batch holds nothing
// yet, so nothing waits for it, and the wait cannot be part of a cycle. A later write
// only tries; when the lock is taken (by another server's batch), the write has not
// run and goes back for the next batch (again), to come first there. So two servers'
// batches never wait for each other in a cycle through a lock.
func (b *batch) beginPostgres(ctx context.Context, j *job) (again bool, err error) {
	first := !b.begun
	q := &pgx.Batch{}
	b.open(q)
	if b.savepoint {
		q.Queue("RELEASE w")
	}
	q.Queue("SAVEPOINT w")
	project := j.by.Project
	lock := project != "" && !b.holdsLock(project)
	wait := lock && !b.savepoint // the batch's first write: no statement has run
	got, last := true, int64(notRead)
	if lock {
		if wait {
			q.Queue(`SELECT pg_advisory_xact_lock($1)`, projectLockKey(project))
		} else {
			q.Queue(`SELECT pg_try_advisory_xact_lock($1)`, projectLockKey(project)).QueryRow(func(row pgx.Row) error {
				return row.Scan(&got)
			})
		}
		queueProjectSeq(q, project, &last) // read after the lock, whatever its outcome
	}
	if err = b.sendTogether(ctx, q); err != nil {
		if first && b.reconnect(ctx) {
			return b.beginPostgres(ctx, j)
		}
		return b.lockFailed(ctx, j, wait, err)
	}
	b.savepoint = true
	if !lock {
		return false, nil
	}
	if !got {
		b.again = append(b.again, j)
		return true, nil
	}
	b.locked[project] = last
	return false, nil
}

// holdsLock says whether the batch holds the project's lock (PostgreSQL).
func (b *batch) holdsLock(projectID string) bool {
	_, ok := b.locked[projectID]
	return ok
}

// lockFailed handles the failure of beginPostgres's statement. Only a batch's first
// write waits, holding nothing, so PostgreSQL is not expected to find it in a deadlock;
// should it still cancel the wait as one, the write has not run, and goes back for the
// next batch.
func (b *batch) lockFailed(ctx context.Context, j *job, waited bool, err error) (again bool, _ error) {
	if !waited || !isDeadlock(err) {
		// A failed statement leaves a PostgreSQL transaction unusable.
		return false, fmt.Errorf("begin a write: %w", err)
	}
	// Only the lock waits, so SAVEPOINT w ran: rolling back to it ends the wait.
	if _, rbErr := b.q.ExecContext(ctx, "ROLLBACK TO w"); rbErr != nil {
		return false, fmt.Errorf("roll back a write whose lock deadlocked: %w", rbErr)
	}
	b.savepoint = true
	if j.retries++; j.retries > maxLockRetries {
		b.jobs = append(b.jobs, j)
		b.results = append(b.results, errDeadlock)
		return true, nil
	}
	b.again = append(b.again, j)
	return true, nil
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

// fail rolls the batch back and gives every write of it err.
func (b *batch) fail(err error) {
	if b.tx != nil {
		_ = b.tx.Rollback()
	} else if b.begun {
		// Should it fail, the pool drops the connection, still in the transaction
		// (pgx's ResetSession), and PostgreSQL rolls back when the session ends.
		_, _ = b.conn.ExecContext(context.Background(), "ROLLBACK")
	}
	failJobs(b.jobs, err)
}

// putBack is what the next batch runs first: the writes this one put back (each comes
// first in its turn), then those of its queue it had no room for or did not reach.
func (b *batch) putBack() []*job {
	return append(b.again, b.queue...)
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
	cache *stmtCache  // prepared statements of the read pool
	batch *batchStmts // prepared statements of the write batch, inside a write
	// On the read pool: how far event reads may go (durable.go).
	horizon *eventHorizon
	// On the read pool: notices other processes' commits before a cache is read
	// (foreign.go).
	watch *foreignWatch
	// On PostgreSQL: each statement runs as postgresText gives it (dialect.go).
	pg bool
}
