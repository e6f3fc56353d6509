package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"

	"github.com/agentdesk/agentdesk/migrations"
)

// PostgreSQL as the second engine (issue 21) is being built: today this file has the
// choice of engine and the PostgreSQL schema; the Store itself runs on SQLite only, and
// the command line refuses --db postgres:// until the engine passes the service tests.
// docs/postgres.md says what is done and what is left.

// Engine is the database under the store.
type Engine int

const (
	// SQLite is the default: one file in the data directory.
	SQLite Engine = iota
	// Postgres is a PostgreSQL database named by a postgres:// URL.
	Postgres
)

func (e Engine) String() string {
	if e == Postgres {
		return "postgres"
	}
	return "sqlite"
}

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
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return Location{}, ErrBadDB
	}
	return Location{Engine: Postgres, URL: raw}, nil
}

// Redacted is the location fit for logs and messages: the URL without its password.
func (l Location) Redacted() string {
	if l.Engine != Postgres {
		return "sqlite"
	}
	u, err := url.Parse(l.URL)
	if err != nil {
		return "postgres://"
	}
	return u.Redacted()
}

// OpenPostgres opens a pool on the PostgreSQL database at rawURL and brings its schema up
// to date (migrations/postgres), under goose's advisory lock so that servers starting
// together migrate once. A database of a newer agentdesk is refused. It is the first
// piece of the PostgreSQL store, used by its tests; no Store runs on it yet.
func OpenPostgres(ctx context.Context, rawURL string) (*sql.DB, error) {
	db, err := sql.Open("pgx", rawURL)
	if err != nil {
		return nil, err
	}
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := migratePostgres(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func migratePostgres(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(database.DialectPostgres, db, migrations.Postgres, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("load postgres migrations: %w", err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	sources := p.ListSources()
	if latest := sources[len(sources)-1].Version; current > latest {
		return &NewerSchemaError{Version: current, Known: latest}
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	return nil
}
