package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// PrivateMode is the mode of every file of the database and of every backup: the user
// agentdesk runs as, and no one else, whatever the umask or the mode of the directory
// (created 0700, but an existing one such as /var/lib/agentdesk may be 0755).
const PrivateMode fs.FileMode = 0o600

// MakePrivate creates the database file empty with mode 0600 when it does not exist
// yet, and narrows to 0600 the database and its -wal and -shm files when a file is
// wider (written by an older agentdesk). SQLite creates -wal and -shm with the main
// file's mode, so a private main file keeps them private too.
func MakePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, PrivateMode)
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		NarrowMode(p)
	}
	return nil
}

// NarrowMode sets a file's mode to 0600 if it is wider. A failure (a file system
// without modes, a file of another user) is logged, not fatal: agentdesk still runs.
func NarrowMode(path string) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil && st.Mode().Perm()&^PrivateMode == 0 {
		return
	}
	if err == nil {
		err = os.Chmod(path, PrivateMode)
	}
	if err != nil {
		slog.Warn("cannot make a database file private (mode 0600); other users of this machine may read it", "file", path, "err", err)
	}
}
