package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WALSyncer fsyncs the WAL file of the database at dbPath.
type WALSyncer struct {
	DBPath string
	wal    *os.File
}

// Sync makes everything committed so far durable. SQLite creates the WAL on the first
// write and, when the last connection closes, deletes it; the syncer keeps a descriptor
// of the current file and opens it again (syncing the directory, which holds its name)
// when the file it holds is no longer the one at the path.
//
// It never closes a descriptor of the live WAL file before Close: closing any descriptor
// of a file drops the process's POSIX locks on it.
func (w *WALSyncer) Sync() error {
	path := w.DBPath + "-wal"
	current, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("find the WAL file: %w", err)
	}
	if w.wal != nil {
		held, err := w.wal.Stat()
		if err != nil || !os.SameFile(held, current) {
			w.wal.Close() // a file that is gone: its locks are gone with it
			w.wal = nil
		}
	}
	if w.wal == nil {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("open the WAL file: %w", err)
		}
		w.wal = f
		if err := SyncDir(filepath.Dir(path)); err != nil {
			return err
		}
	}
	return datasync(w.wal)
}

func (w *WALSyncer) Close() error {
	if w.wal == nil {
		return nil
	}
	err := w.wal.Close()
	w.wal = nil
	return err
}

// SyncDir makes the directory's entries (a new file's name) durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open the data directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync the data directory: %w", err)
	}
	return nil
}
