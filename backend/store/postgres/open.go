package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"

	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	"github.com/agentdesk/agentdesk/migrations"
)

// Open opens a pool on the PostgreSQL database at rawURL and brings its schema up
// to date (migrations/postgres), under goose's advisory lock so that servers starting
// together migrate once. A database of a newer agentdesk is refused. The store opens its
// own pools after it (store.OpenLocation).
func Open(ctx context.Context, rawURL string) (*sql.DB, error) {
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
		return &sqlite.NewerSchemaError{Version: current, Known: latest}
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	return nil
}

// IsURL says whether raw names a PostgreSQL database: a postgres:// or postgresql:// URL.
func IsURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
}

// Redacted is a PostgreSQL URL fit for logs and messages: without its password.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://"
	}
	return u.Redacted()
}
