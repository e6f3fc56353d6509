package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"modernc.org/sqlite" // also registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentdesk/agentdesk/migrations"
)

// DSN is the data source name of a connection to the database at path: the writer's
// (one connection, immediate transactions, no automatic checkpoints) or a reader's.
func DSN(path string, writer bool, sync string, queryOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(busyTimeout.Milliseconds()))+")")
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

// KeepOneConnection makes db one connection, never closed for its age or idleness: the
// writer's (its transaction is the batch) and the data_version watch's (the value is per
// connection).
func KeepOneConnection(db *sql.DB) {
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

// NewerSchemaError refuses a database written by a newer agentdesk: its schema version
// is above the highest this one knows, and migrating it down would lose what the newer
// version stored.
type NewerSchemaError struct{ Version, Known int64 }

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("this database was written by a newer agentdesk (schema %d, this one knows up to %d): upgrade agentdesk", e.Version, e.Known)
}

// SchemaVersion reads the schema version of the database at path without changing
// anything: 0 when there is no file, an empty one, or no migration applied yet.
func SchemaVersion(ctx context.Context, path string) (int64, error) {
	if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		return 0, nil
	}
	// Read-only, so that it cannot checkpoint on close (restore.go).
	db, err := OpenReadOnly(path)
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

// Migrate brings the schema of the database on db up to date (migrations/), refusing
// a database of a newer agentdesk.
func Migrate(ctx context.Context, db *sql.DB) error {
	p, err := gooseProvider(db)
	if err != nil {
		return err
	}
	current, err := p.GetDBVersion(ctx)
	// Another process opening the new file at the same moment (switching it to WAL,
	// creating goose's table) can refuse this one's first statement with SQLITE_BUSY
	// without the busy timeout applying: it is tried again while that timeout would
	// have waited.
	for deadline := time.Now().Add(busyTimeout); isBusy(err) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		current, err = p.GetDBVersion(ctx)
	}
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

// Backup writes a consistent copy of the live database at dbPath to path, which must
// not exist: VACUUM INTO a new private file (mode 0600).
func Backup(ctx context.Context, dbPath, synchronous, path string) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// VACUUM INTO would create the file with SQLite's default mode (0644 less the
	// umask); it also accepts an empty file, so the file is made first, 0600.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, PrivateMode)
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
	db, err := sql.Open("sqlite", DSN(dbPath, false, synchronous, false))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "VACUUM INTO $1", path)
	return err
}

// gooseProvider is goose's provider of the SQLite migrations (migrations/) on db.
func gooseProvider(db *sql.DB) (*goose.Provider, error) {
	p, err := goose.NewProvider(database.DialectSQLite3, db, migrations.FS)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, nil
}

// isBusy reports SQLITE_BUSY: another connection holds the lock asked for.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// busyTimeout is how long a connection waits for another's lock (SQLite's busy_timeout).
const busyTimeout = 10 * time.Second
