//go:build unix

package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestFilesArePrivate: with umask 022, in an existing 0755 directory, the database, its
// -wal and -shm and a backup are 0600, and a new data directory is 0700. A database
// left 0644 by an older version is narrowed to 0600 when opened.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	check := func(p string, want os.FileMode) {
		t.Helper()
		if got := mode(p); got != want {
			t.Errorf("%s has mode %#o, want %#o", filepath.Base(p), got, want)
		}
	}

	// An older version's database, world-readable.
	older := filepath.Join(shared, "older.db")
	if err := os.WriteFile(older, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(shared, "agentdesk.db"), older, filepath.Join(shared, "new", "agentdesk.db")} {
		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, Author{}, func(tx *Tx) error {
			return tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()})
		}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			check(p, 0o600)
		}
		backup := filepath.Join(shared, filepath.Base(filepath.Dir(path))+"-"+filepath.Base(path)+".backup")
		if err := s.Backup(ctx, backup); err != nil {
			t.Fatal(err)
		}
		check(backup, 0o600)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	check(filepath.Join(shared, "new"), 0o700)
	if err := (&sqliteEngine{Store: &Store{}}).backup(ctx, filepath.Join(shared, "older.db")); err == nil {
		t.Error("a backup over an existing file succeeded")
	}
}
