package store

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// ErrNotFound is returned when a looked-up row does not exist (or is in another project).
var ErrNotFound = errors.New("not found")

// ErrClosed is returned by writes submitted after Close.
var ErrClosed = errors.New("store is closed")

// Options tune a Store; the zero value is what agentdesk runs with.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: FULL (default) makes every commit
	// survive power loss; NORMAL survives a crash of the process only.
	Synchronous string
	// OnCommit, if set, receives the events of each committed batch, in order.
	OnCommit func([]model.Event)
	// AwaitDelivery, if set, is called before a write that made events is answered, in
	// the caller's goroutine, after OnCommit had its batch: the hub returns once the
	// events are on their way to every subscriber (events.Hub.AwaitDelivery).
	AwaitDelivery func(context.Context)
	// OnBatch, if set, is told of each committed batch: how many writes it held and how
	// long its COMMIT took (the metrics, backend/metrics). It must not block.
	OnBatch func(writes int, commit time.Duration)
	// OnForeign, if set, is told that another server committed events to the same
	// PostgreSQL database (or that some may have been missed): the hub reads them as it
	// does this server's own. It runs on the listener's goroutine and must not block.
	OnForeign func()
}

// Store is the database: its engine (engine.go), which runs the writes, and a pool of
// readers.
type Store struct {
	path   string
	eng    engine
	writer *sql.DB // the engine's writer connection (SQLite) or pool (PostgreSQL)
	reader *sql.DB
	read   Reader // the read pool's queries (Read)
	opts   Options
	// What the store says once it has stopped taking writes (failstop.go).
	stopTexts stopTexts

	stopOnce sync.Once
	stop     chan struct{}
	closeMu  sync.RWMutex // held for reading while a write is being submitted
	closed   bool
	stopped  atomic.Bool // a commit or fsync failed: no more writes (failstop.go)
	diskFull atomic.Bool // the last batch failed for want of space (diskfull.go)
	// A full disk's episode, for logging it once (diskfull.go): under way, and when a
	// batch last failed for want of space (Unix nanoseconds).
	diskFullEpisode atomic.Bool
	lastDiskFull    atomic.Int64

	readQueries atomic.Int64    // querycount.go
	horizon     eventHorizon    // durable.go
	tokens      tokenCache      // credcache.go
	credentials credentialCount // the last count of token changes read (credcache.go)

	writes, batches, syncs            atomic.Int64
	execNanos, commitNanos, syncNanos atomic.Int64 // the writer's time running writes and committing them; the syncer's fsyncs
}

// newStore is a Store on the pools writer and reader, before its engine is set.
func newStore(path string, writer, reader *sql.DB, d *dialect, stop stopTexts, opts Options) *Store {
	s := &Store{path: path, writer: writer, reader: reader, opts: opts, stopTexts: stop, stop: make(chan struct{})}
	s.read = Reader{q: reader, sql: d, horizon: &s.horizon, queries: &s.readQueries}
	return s
}

// Path is the database file; on PostgreSQL, the database's URL without its password.
func (s *Store) Path() string { return s.path }

// Ping checks that the database answers and takes writes.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.Stopped(); err != nil {
		return err
	}
	var one int
	return s.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Close finishes the writes already submitted, refuses new ones and closes the database.
func (s *Store) Close() error {
	s.closeMu.Lock()
	s.closed = true
	s.closeMu.Unlock()
	s.stopOnce.Do(func() { close(s.stop) })
	return s.eng.close()
}

// Backup writes a consistent copy of the live database to path, which must not exist.
// The copy is private (mode 0600), like the database.
func (s *Store) Backup(ctx context.Context, path string) error { return s.eng.backup(ctx, path) }

// CanBackup says whether Backup can copy this store's database: nil on SQLite, the
// reason on PostgreSQL.
func (s *Store) CanBackup() error { return s.eng.canBackup() }

// Read gives the queries that run on the read pool.
func (s *Store) Read() Reader { return s.read }

// Timestamps are stored as fixed-width UTC text, so that they sort as strings.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeLayout, s)
	return t
}

func fmtTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return fmtTime(*t)
}

func parseTimePtr(s sql.NullString) *time.Time {
	if !s.Valid {
		return nil
	}
	t := parseTime(s.String)
	return &t
}

// sizeReadPool gives a read pool two connections a core, at least four.
func sizeReadPool(db *sql.DB) {
	n := max(4, 2*runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
}
