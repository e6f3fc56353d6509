// Package migrations embeds the goose SQL migrations that shape the agentdesk database.
// The store applies them on start; files are never edited once released, only added.
//
// The files here are SQLite's; postgres/ holds PostgreSQL's, numbered alike: its
// baseline 00021 is SQLite's schema after 00021, and a later migration N of one dialect
// has its twin N in the other.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed *.sql
var FS embed.FS

//go:embed postgres/*.sql
var postgresFiles embed.FS

// Postgres is the PostgreSQL migrations, at the root of the file system as goose wants.
var Postgres, _ = fs.Sub(postgresFiles, "postgres")
