package store

import "context"

// engine is how one database runs the store's writes and what else differs between
// SQLite (sqliteEngine, sqlite.go) and PostgreSQL (postgresEngine, postgres.go) at the
// level of the store; the SQL that differs is the engine's dialect (dialect.go). Each
// engine holds the state of its own machinery; what both share is the Store's.
type engine interface {
	// submit runs the write j or hands it to the engine's writer, while the caller holds
	// Store.closeMu for reading; j's outcome, once it is durable, comes on j.done. An
	// error means j was not submitted (its context ended first). j runs once.
	submit(j *job) error
	// close finishes the writes under way and closes the engine's connections, the
	// Store's read pool included (Store.Close has refused new writes).
	close() error
	// backup writes a consistent copy of the database to path; canBackup says why it
	// cannot, or nil.
	backup(ctx context.Context, path string) error
	canBackup() error
	// checkTokens notices other processes' (or servers') token changes before a cached
	// token is used (credcache.go); an error means the cache cannot be trusted now.
	checkTokens(ctx context.Context) error
	// holdWebhook runs fn while this server is the only one sending webhook id's events
	// (Store.HoldWebhook).
	holdWebhook(ctx context.Context, id int64, fn func() error) (bool, error)
	// queued is how many writes wait for the writer.
	queued() int
	// listening says whether other servers' commits are being noticed now.
	listening() bool
}
