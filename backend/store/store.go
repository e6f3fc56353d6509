package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/migrations"
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
	// OnBatch, if set, is told of each committed batch: how many writes it held and how
	// long its COMMIT took (the metrics, backend/metrics). It must not block.
	OnBatch func(writes int, commit time.Duration)
	// OnForeign, if set, is told that another server committed events to the same
	// PostgreSQL database (or that some may have been missed): the hub reads them as it
	// does this server's own. It runs on the listener's goroutine and must not block.
	OnForeign func()
}

// Store is the database: one writer connection, a pool of readers.
type Store struct {
	path   string
	pg     bool // the engine is PostgreSQL (postgres.go); SQLite otherwise
	sql    *dialect
	writer *sql.DB
	reader *sql.DB
	opts   Options

	jobs      chan *job
	committed chan committed // from the writer to the syncer (durable.go)
	syncReady chan struct{}  // the syncer waits for a batch
	wal       walSyncer
	// The checkpointer's signals (checkpoint.go).
	walGrew          chan struct{}
	finishCheckpoint atomic.Bool
	checkpointerEnd  chan struct{}
	beforeCheckpoint atomic.Pointer[func()] // tests: runs before each background checkpoint

	stopOnce  sync.Once
	stop      chan struct{}
	writerEnd chan struct{}
	closeMu   sync.RWMutex // held for reading while a write is being submitted
	closed    bool
	stopped   atomic.Bool // a commit or fsync failed: no more writes (failstop.go)
	diskFull  atomic.Bool // the last batch failed for want of space (diskfull.go)
	// A full disk's episode, for logging it once (diskfull.go): under way, and when a
	// batch last failed for want of space (Unix nanoseconds).
	diskFullEpisode atomic.Bool
	lastDiskFull    atomic.Int64

	readStmts, writeStmts *stmtCache
	watch                 *foreignWatch // other processes' commits (foreign.go)
	horizon               eventHorizon
	beforeSync            atomic.Pointer[func(events []model.Event) error] // tests: runs before each fsync with the events it covers; an error stands for the fsync's
	beforeCommit          atomic.Pointer[func()]                           // tests: runs (once) before a PostgreSQL batch's COMMIT
	tokens                tokenCache                                       // credcache.go
	credentials           credentialCount                                  // the last count of token changes read (credcache.go)
	// PostgreSQL, several servers (pgmulti.go): the writer connections' backend pids, the
	// listener for the other servers' commits, the pool holding webhook locks.
	writerPIDs *pidSet
	listener   *Listener
	locks      *sql.DB

	writes, batches, syncs            atomic.Int64
	execNanos, commitNanos, syncNanos atomic.Int64 // the writer's time running writes and committing them; the syncer's fsyncs
}

func dsn(path string, writer bool, sync string, queryOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	// Each write of a batch runs in a savepoint, whose statement journal SQLite spills to
	// a temporary file past 64 KiB; in memory it costs no system calls.
	q.Add("_pragma", "temp_store(MEMORY)")
	if writer {
		q.Set("_txlock", "immediate")
		q.Add("_pragma", "wal_autocheckpoint(0)") // the checkpointer's job (checkpoint.go)
	}
	if queryOnly {
		q.Add("_pragma", "query_only(1)")
		// Each reader's page cache holds much the same hot pages as the others' and as
		// the kernel's page cache behind them, which serves a miss in microseconds: 1 MiB
		// each instead of SQLite's 2 MiB. make bench's peak RSS: 76.7-76.8 -> 68.6-69.4
		// MiB (2 pairs of 2-round runs), reads' medians within the runs' noise.
		q.Add("_pragma", "cache_size(-1024)")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path, applies pending migrations and
// starts the writer. A database written by a newer agentdesk is refused.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	// A newer agentdesk's database is refused before anything opens it for writing:
	// not a byte of it, nor its mode, changes (migrate checks again, under the lock).
	if v, err := SchemaVersion(ctx, path); err != nil {
		return nil, err
	} else if known := KnownSchema(); v > known {
		return nil, &NewerSchemaError{Version: v, Known: known}
	}
	if err := makePrivate(path); err != nil {
		return nil, err
	}
	// FULL durability comes from the syncer's fsync of the WAL (durable.go), not SQLite's.
	writer, err := sql.Open("sqlite", dsn(path, true, "NORMAL", false))
	if err != nil {
		return nil, err
	}
	keepOneConnection(writer)
	if err := migrate(ctx, writer); err != nil {
		writer.Close()
		return nil, err
	}
	// The -wal and -shm files exist now; an older -shm may have kept a wider mode.
	for _, p := range []string{path + "-wal", path + "-shm"} {
		narrowMode(p)
	}
	reader, err := sql.Open("sqlite", dsn(path, false, opts.Synchronous, true))
	if err != nil {
		writer.Close()
		return nil, err
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	reader.SetConnMaxIdleTime(0)
	reader.SetConnMaxLifetime(0)

	s := &Store{
		path: path, writer: writer, reader: reader, opts: opts, sql: sqliteSQL,
		jobs:            make(chan *job, 1024),
		committed:       make(chan committed, 64),
		syncReady:       make(chan struct{}, 1),
		wal:             walSyncer{dbPath: path},
		walGrew:         make(chan struct{}, 1),
		checkpointerEnd: make(chan struct{}),
		stop:            make(chan struct{}),
		writerEnd:       make(chan struct{}),
		readStmts:       newStmtCache(reader),
		writeStmts:      newStmtCache(writer),
	}
	s.watch, err = openForeignWatch(path, opts.Synchronous, func() {
		s.tokens.clear()
	})
	if err != nil {
		reader.Close()
		writer.Close()
		return nil, err
	}
	go s.writeLoop()
	go s.syncLoop()
	go s.checkpointLoop()
	return s, nil
}

// keepOneConnection makes db one connection, never closed for its age or idleness: the
// writer's (its transaction is the batch) and the data_version watch's (the value is per
// connection).
func keepOneConnection(db *sql.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// KnownSchema is the highest schema version (goose migration) this agentdesk knows.
func KnownSchema() int64 {
	var latest int64
	entries, _ := fs.ReadDir(migrations.FS, ".")
	for _, e := range entries {
		if v, err := strconv.ParseInt(strings.SplitN(e.Name(), "_", 2)[0], 10, 64); err == nil && strings.HasSuffix(e.Name(), ".sql") {
			latest = max(latest, v)
		}
	}
	return latest
}

// SchemaVersion reads the schema version of the database at path without changing
// anything: 0 when there is no file, an empty one, or no migration applied yet.
func SchemaVersion(ctx context.Context, path string) (int64, error) {
	if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		return 0, nil
	}
	// Read-only, so that it cannot checkpoint on close (restore.go).
	db, err := openReadOnly(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'goose_db_version'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if n == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM goose_db_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read the schema version of %s: %w", path, err)
	}
	return v.Int64, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	sub, err := fs.Sub(migrations.FS, ".")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(database.DialectSQLite3, db, sub)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	sources := p.ListSources()
	latest := sources[len(sources)-1].Version
	if current > latest {
		return &NewerSchemaError{Version: current, Known: latest}
	}
	// Two processes that open a new database at once (the server and a command started
	// together) both find it unmigrated, and one loses a migration to the other: its
	// transaction rolls back. It then reads the version again and goes on from there,
	// as long as the other process is making progress.
	for {
		_, err := p.Up(ctx)
		if err == nil {
			return nil
		}
		now, verr := p.GetDBVersion(ctx)
		if verr != nil || now <= current {
			return fmt.Errorf("migrate database: %w", err)
		}
		current = now
	}
}

// NewerSchemaError refuses a database written by a newer agentdesk: its schema version
// is above the highest this one knows, and migrating it down would lose what the newer
// version stored.
type NewerSchemaError struct{ Version, Known int64 }

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("this database was written by a newer agentdesk (schema %d, this one knows up to %d): upgrade agentdesk", e.Version, e.Known)
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
	<-s.writerEnd
	<-s.checkpointerEnd
	s.readStmts.close()
	s.writeStmts.close()
	if s.pg {
		return errors.Join(s.listener.Close(), s.locks.Close(), s.reader.Close(), s.writer.Close())
	}
	// The writer's connection closes last: SQLite then checkpoints and removes the WAL.
	return errors.Join(s.watch.close(), s.reader.Close(), s.writer.Close(), s.wal.close())
}

// Backup writes a consistent copy of the live database to path, which must not exist.
// The copy is private (mode 0600), like the database.
func (s *Store) Backup(ctx context.Context, path string) (err error) {
	if s.pg {
		return errBackupPostgres
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// VACUUM INTO would create the file with SQLite's default mode (0644 less the
	// umask); it also accepts an empty file, so the file is made first, 0600.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateMode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; choose a new file name", path)
	}
	if err != nil {
		return err
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	// VACUUM INTO reads one consistent snapshot while writers go on; it must not run on
	// the query_only read pool, so it gets a connection of its own.
	db, err := sql.Open("sqlite", dsn(s.path, false, s.opts.Synchronous, false))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "VACUUM INTO $1", path)
	return err
}

// Read gives the queries that run on the read pool.
func (s *Store) Read() Reader {
	return Reader{q: s.reader, cache: s.readStmts, horizon: &s.horizon, watch: s.watch, sql: s.sql}
}

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
