// Package sqlite is the SQLite engine's machinery under the store (package store's
// sqliteEngine): opening and migrating the database file, keeping its files private,
// making the WAL durable with fsync, checkpointing it in the background, noticing other
// processes' commits, a full disk, backups and restores. The store's queries and its
// group-committing writer are in package store, written once for both engines.
package sqlite
