// Package store is agentdesk's database access and the only code that writes SQL, on
// SQLite (the default, one file) or PostgreSQL (OpenLocation; postgres.go, dialect.go).
// A write function runs once, in a transaction: on SQLite one writer connection commits
// concurrent writes together (group commit, a savepoint each: write.go); on PostgreSQL
// each write is a transaction of its own on a pool (pgwrite.go). Reads use a separate
// pool. The service sees the same Reader and Tx methods on both engines.
package store
