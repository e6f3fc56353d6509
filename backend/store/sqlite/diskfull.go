package sqlite

import (
	"errors"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// IsFull reports whether err says the disk is full: SQLite's SQLITE_FULL (a write to
// the database or its WAL could not get the space it needs) or ENOSPC. A SQLITE_FULL
// means the transaction did not commit: SQLite rolled it back.
func IsFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}
