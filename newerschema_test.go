package main

import (
	"crypto/sha256"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	_ "modernc.org/sqlite"
)

// TestNewerDatabaseRefused: this binary, given a database written by a newer agentdesk
// (a schema version above the highest it knows), refuses it with a message that says
// so and what to do, exits 1, and leaves the file's bytes as they were: as the server,
// and as a command.
func TestNewerDatabaseRefused(t *testing.T) {
	data := t.TempDir()
	mustCLI(t, "project", "create", "--name", "p", "--data", data)
	path := filepath.Join(data, "agentdesk.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	newer := sqlite.KnownSchema() + 1
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)`, newer); err != nil {
		t.Fatal(err)
	}
	db.Close() // the last connection: SQLite checkpoints and removes the WAL
	sum := func() [32]byte {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()

	want := "this database was written by a newer agentdesk (schema " + itoa(newer) + ", this one knows up to " + itoa(newer-1) + "): upgrade agentdesk"
	for _, args := range [][]string{{"--serve", "--addr", "127.0.0.1:0"}, {"project", "list"}, {"backup", "--out", filepath.Join(t.TempDir(), "b.db")}} {
		_, stderr, code := run(t, append(args, "--data", data)...)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("agentdesk %v: exit %d, stderr %q; want exit 1 saying %q", args, code, stderr, want)
		}
		if sum() != before {
			t.Fatalf("agentdesk %v changed the newer database", args)
		}
		for _, f := range []string{path + "-wal", path + "-shm"} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("agentdesk %v left %s behind", args, filepath.Base(f))
			}
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
