package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" driver

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
)

// PostgreSQL as the second engine (issue 21): the choice of engine, the PostgreSQL
// schema, and a Store on it (OpenLocation). The service sees the same Reader and Tx
// methods on both engines; the Store's pg field picks the few things that differ
// (dialect.go, events.go). docs/postgres.md says what is done and what is left.

// Engine is the database under the store.
type Engine int

const (
	// SQLite is the default: one file in the data directory.
	SQLite Engine = iota
	// Postgres is a PostgreSQL database named by a postgres:// URL.
	Postgres
)

// Location is where the data lives, as --db (env AGENTDESK_DB) says.
type Location struct {
	Engine Engine
	URL    string // the postgres:// URL; "" for SQLite
}

// ErrBadDB is a --db value that is neither empty nor a postgres:// URL.
var ErrBadDB = errors.New("--db (env AGENTDESK_DB) takes a postgres://user:password@host/database URL; without it agentdesk uses SQLite in the data directory")

// ParseDB reads a --db value: "" is SQLite in the data directory; postgres:// or
// postgresql:// is PostgreSQL. An error never repeats the value: it may hold a password.
func ParseDB(raw string) (Location, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Location{Engine: SQLite}, nil
	}
	if !postgres.IsURL(raw) {
		return Location{}, ErrBadDB
	}
	return Location{Engine: Postgres, URL: raw}, nil
}

// Redacted is the location fit for logs and messages: the URL without its password.
func (l Location) Redacted() string {
	if l.Engine != Postgres {
		return "sqlite"
	}
	return postgres.Redacted(l.URL)
}

// OpenLocation opens the store where loc says: SQLite at path (Open), or the PostgreSQL
// database of loc.URL, whose schema it brings up to date.
func OpenLocation(ctx context.Context, loc Location, path string, opts Options) (*Store, error) {
	if loc.Engine != Postgres {
		return Open(ctx, path, opts)
	}
	return openPostgresStore(ctx, loc, opts)
}

// writerIdleInTransaction is how long PostgreSQL lets a writer's session sit idle in a
// transaction before it ends it (tests shorten it).
var writerIdleInTransaction = 30 * time.Second

// openPostgresStore is Open on PostgreSQL: a pool of writers, each write a transaction
// of its own (pgwrite.go), and a pool of readers, without SQLite's machinery: no single
// writer, no WAL syncer (with synchronous_commit on, a COMMIT that returned is
// durable), no checkpointer, no data_version watch, no disk-full probe.
func openPostgresStore(ctx context.Context, loc Location, opts Options) (*Store, error) {
	connect := func(params map[string]string, opts ...stdlib.OptionOpenDB) (*sql.DB, error) {
		cfg, err := pgx.ParseConfig(loc.URL)
		if err != nil {
			return nil, errors.New("--db: not a valid postgres:// URL") // never the URL: it may hold a password
		}
		for k, v := range params {
			cfg.RuntimeParams[k] = v
		}
		return stdlib.OpenDB(*cfg, opts...), nil
	}
	// Migrate on a pool of its own, under goose's advisory lock (servers starting together).
	migrator, err := postgres.Open(ctx, loc.URL)
	if err != nil {
		return nil, err
	}
	migrator.Close()
	// The writers' backend pids tell the listener which notifications are this server's
	// own (pgmulti.go); the pool makes a connection again if it is lost.
	writerPIDs := &postgres.PIDSet{}
	writerParams := map[string]string{
		"synchronous_commit": "on",
		// A server that stops in the middle of a write without closing its connection
		// (its machine gone) would hold its project's lock (postgres_seq.go) and rows
		// until TCP gives up, hours later, and the other servers' writes to that
		// project would wait as long. A write is idle in its transaction only between
		// two statements, never for seconds: PostgreSQL ends such a session.
		"idle_in_transaction_session_timeout": strconv.Itoa(int(writerIdleInTransaction.Milliseconds())),
	}
	writer, err := connect(writerParams, stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
		writerPIDs.Add(c.PgConn().PID())
		return nil
	}))
	if err != nil {
		return nil, err
	}
	writer.SetMaxOpenConns(writerConns)
	writer.SetMaxIdleConns(writerConns)
	// The readers refuse writes, as SQLite's query_only readers do.
	reader, err := connect(map[string]string{"default_transaction_read_only": "on"})
	if err != nil {
		writer.Close()
		return nil, err
	}
	sizeReadPool(reader)
	locks, err := connect(nil)
	if err != nil {
		writer.Close()
		reader.Close()
		return nil, err
	}
	locks.SetMaxOpenConns(lockConns)
	if err := errors.Join(writer.PingContext(ctx), reader.PingContext(ctx)); err != nil {
		writer.Close()
		reader.Close()
		locks.Close()
		return nil, fmt.Errorf("connect to %s: %w", loc.Redacted(), err)
	}
	e := &postgresEngine{
		Store:      newStore(loc.Redacted(), writer, reader, postgresSQL, postgresStopTexts, opts),
		writerPIDs: writerPIDs, locks: locks,
	}
	e.eng = e
	// Other servers' commits wake this one's hub (pgmulti.go).
	if err := e.startListener(ctx, loc.URL); err != nil {
		writer.Close()
		reader.Close()
		locks.Close()
		return nil, fmt.Errorf("connect to %s: %w", loc.Redacted(), err)
	}
	go postgres.AnalyzeTasksFirst(e.locks, e.stop, postgres.FirstAnalyzeEvery)
	return e.Store, nil
}

// postgresEngine is the store on PostgreSQL: a pool of writers, each write a
// transaction of its own (pgwrite.go), and none of SQLite's machinery: no single
// writer, no WAL syncer (with synchronous_commit on, a COMMIT that returned is durable),
// no checkpointer, no data_version watch. Several servers may share the database
// (pgmulti.go).
type postgresEngine struct {
	*Store
	// The writer connections' backend pids, the listener for the other servers'
	// commits, the pool holding webhook locks (pgmulti.go).
	writerPIDs *postgres.PIDSet
	listener   *postgres.Listener
	locks      *sql.DB

	beforeCommit atomic.Pointer[func()] // tests: runs (once) before a write's COMMIT
}

// submit runs j here, in the caller's goroutine (pgwrite.go).
func (s *postgresEngine) submit(j *job) error {
	j.done <- s.writePostgres(j)
	return nil
}

// close closes the pools once the writes under way have finished (Store.Close held
// closeMu until then).
func (s *postgresEngine) close() error {
	return errors.Join(s.listener.Close(), s.locks.Close(), s.reader.Close(), s.writer.Close())
}

func (s *postgresEngine) backup(context.Context, string) error { return errBackupPostgres }
func (s *postgresEngine) canBackup() error                     { return errBackupPostgres }

// checkTokens reads the count of token changes unless a read began less than
// foreignLookEvery ago (credcache.go).
func (s *postgresEngine) checkTokens(ctx context.Context) error {
	if s.credentials.recent() {
		return nil
	}
	return s.lookAtCredentials(ctx)
}

// queued: each write runs in its caller's goroutine (those waiting for a connection of
// the pool are not counted).
func (s *postgresEngine) queued() int { return 0 }

// errDeadlock answers the writes PostgreSQL cancelled to break a deadlock (40P01) or a
// serialization failure (40001) with another write. They are not run again. Nothing of
// them was stored.
var errDeadlock = errs.Unavailable("the database cancelled this change to resolve a conflict with a change made at the same " +
	"time through another agentdesk server; nothing of it was saved: send it again")

// isDeadlock reports PostgreSQL's deadlock and serialization failures.
func isDeadlock(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// errBackupPostgres answers a backup asked of a PostgreSQL store.
var errBackupPostgres = errs.Conflicting("agentdesk's backup and export copy its SQLite database; this server runs on PostgreSQL: back it up with pg_dump (see docs/postgres.md)")
