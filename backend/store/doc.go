// Package store is agentdesk's SQLite access and the only code that writes SQL.
// Writes go through one writer connection that commits concurrent requests together
// (group commit); reads use a separate pool. SQLite specifics stay in this package.
package store
