package sqlite

import (
	"os"
	"syscall"
)

// datasync flushes f's data, and the metadata needed to read it back (its size), to
// stable storage: what SQLite itself does for the WAL on Linux.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
