// Package store is agentdesk's database access and the only code that writes SQL, on
// SQLite (the default, one file) or PostgreSQL (OpenLocation; postgres.go, dialect.go).
// Writes go through one writer connection that commits concurrent requests together
// (group commit); reads use a separate pool. The service sees the same Reader and Tx
// methods on both engines; what differs between them stays in this package.
package store
