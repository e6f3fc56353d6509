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
	"sync/atomic"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/migrations"
)

// sqliteEngine is the store on SQLite, one file in the data directory: one writer
// connection whose single writer commits the writes in groups (write.go), a syncer that
// makes each group durable with one fsync of the WAL (durable.go), a background
// checkpointer (checkpoint.go), and a watch on other processes' commits (foreign.go).
type sqliteEngine struct {
	*Store

	jobs      chan *job
	committed chan committed // from the writer to the syncer (durable.go)
	syncReady chan struct{}  // the syncer waits for a batch
	writerEnd chan struct{}  // the syncer has acknowledged the last batch
	wal       walSyncer
	// The checkpointer's signals (checkpoint.go).
	walGrew          chan struct{}
	finishCheckpoint atomic.Bool
	checkpointerEnd  chan struct{}

	readStmts, writeStmts *stmtCache
	watch                 *foreignWatch // other processes' commits (foreign.go)

	beforeCheckpoint atomic.Pointer[func()]                           // tests: runs before each background checkpoint
	beforeSync       atomic.Pointer[func(events []model.Event) error] // tests: runs before each fsync with the events it covers; an error stands for the fsync's
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

	e := &sqliteEngine{
		Store:           newStore(path, writer, reader, sqliteSQL, opts),
		jobs:            make(chan *job, 1024),
		committed:       make(chan committed, 64),
		syncReady:       make(chan struct{}, 1),
		writerEnd:       make(chan struct{}),
		wal:             walSyncer{dbPath: path},
		walGrew:         make(chan struct{}, 1),
		checkpointerEnd: make(chan struct{}),
		readStmts:       newStmtCache(reader),
		writeStmts:      newStmtCache(writer),
	}
	e.eng = e
	e.read.cache = e.readStmts
	e.watch, err = openForeignWatch(path, opts.Synchronous, func() {
		e.tokens.clear()
	})
	if err != nil {
		reader.Close()
		writer.Close()
		return nil, err
	}
	go e.writeLoop()
	go e.syncLoop()
	go e.checkpointLoop()
	return e.Store, nil
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

// submit queues j for the single writer; wait gives its outcome.
func (s *sqliteEngine) submit(j *job) func() error {
	select {
	case s.jobs <- j:
	case <-j.ctx.Done():
		return j.ctx.Err
	}
	// Once submitted, wait for the outcome even if ctx ends: the write may commit.
	return func() error { return <-j.done }
}

// close ends the writer once it has written what is queued, then the checkpointer, and
// closes the connections: the writer's last, so that SQLite checkpoints and removes the
// WAL.
func (s *sqliteEngine) close() error {
	<-s.writerEnd
	<-s.checkpointerEnd
	s.readStmts.close()
	s.writeStmts.close()
	return errors.Join(s.watch.close(), s.reader.Close(), s.writer.Close(), s.wal.close())
}

func (s *sqliteEngine) canBackup() error { return nil }

// checkTokens looks at other processes' commits (foreign.go) unless a look began less
// than foreignLookEvery ago.
func (s *sqliteEngine) checkTokens(ctx context.Context) error {
	s.watch.checkRecent(ctx, foreignLookEvery)
	return nil
}

// holdWebhook just runs fn: one server per data directory.
func (s *sqliteEngine) holdWebhook(_ context.Context, _ int64, fn func() error) (bool, error) {
	return true, fn()
}

func (s *sqliteEngine) queued() int { return len(s.jobs) }

// listening: there are no other servers.
func (s *sqliteEngine) listening() bool { return true }

func (s *sqliteEngine) stopTexts() stopTexts { return sqliteStopTexts }

// backup is Store.Backup: VACUUM INTO a new private file.
func (s *sqliteEngine) backup(ctx context.Context, path string) (err error) {
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
