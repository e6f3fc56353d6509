package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// The package's TestMain (pgtest.Main) is migrate_test.go's, on main.

// TestDBPostgres: --db and AGENTDESK_DB are read on --serve, the desktop and every
// command that opens the database, and a postgres:// URL is that database: what one
// command writes there, another reads, whatever its data directory. A database that
// cannot be reached is an error that does not print the password; SQLite's backup and
// restore say what to use instead. Any other value is a usage error.
func TestDBPostgres(t *testing.T) {
	url := pgtest.DB(t)
	run := func(env string, args ...string) (int, string, string) {
		t.Helper()
		t.Setenv("AGENTDESK_DB", env)
		var stdout, stderr bytes.Buffer
		code := Main(args, &stdout, &stderr, func(server.Config) int { t.Errorf("%q opened the desktop", args); return 0 })
		return code, stdout.String(), stderr.String()
	}
	if code, out, errOut := run("", "project", "create", "--data", t.TempDir(), "--db", url, "--name", "on-postgres"); code != 0 || !strings.Contains(out, "on-postgres") {
		t.Fatalf("project create --db: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, c := range []struct {
		env  string
		args []string
	}{
		{url, []string{"project", "list", "--data", t.TempDir()}},
		{"", []string{"--db", url, "project", "list", "--data", t.TempDir()}},
		{"", []string{"project", "list", "--data", t.TempDir(), "--db", url}},
	} {
		code, out, errOut := run(c.env, c.args...)
		if code != 0 || !strings.Contains(out, "on-postgres") || strings.Contains(errOut, "new, empty database") {
			t.Errorf("%q (AGENTDESK_DB=%q): exit %d, stdout %q, stderr %q; want the project made on PostgreSQL", c.args, c.env, code, out, errOut)
		}
	}
	// The desktop and --serve get the location in their configuration.
	t.Setenv("AGENTDESK_DB", "")
	var got server.Config
	if code := Main([]string{"--data", t.TempDir(), "--db", url}, io.Discard, io.Discard, func(cfg server.Config) int { got = cfg; return 0 }); code != 0 || got.DB.Engine != store.Postgres || got.DB.URL != url {
		t.Errorf("the desktop got %+v (exit %d), want the PostgreSQL location", got.DB.Redacted(), code)
	}

	const unreachable = "postgres://agentdesk:s3cret@127.0.0.1:1/agentdesk"
	if code, _, errOut := run(unreachable, "project", "list", "--data", t.TempDir()); code == 0 || strings.Contains(errOut, "s3cret") || !strings.Contains(errOut, "127.0.0.1") {
		t.Errorf("unreachable database: exit %d, stderr %q; want an error naming the server without the password", code, errOut)
	}
	if code, _, errOut := run(url, "backup", "--data", t.TempDir(), "--out", t.TempDir()+"/backup.db"); code == 0 || !strings.Contains(errOut, "pg_dump") {
		t.Errorf("backup on PostgreSQL: exit %d, stderr %q; want pg_dump named", code, errOut)
	}
	if code, _, errOut := run(url, "restore", "--data", t.TempDir(), "--from", t.TempDir()+"/backup.db"); code != 2 || !strings.Contains(errOut, "pg_restore") {
		t.Errorf("restore on PostgreSQL: exit %d, stderr %q; want 2 and pg_restore named", code, errOut)
	}

	t.Setenv("AGENTDESK_DB", "")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"project", "list", "--data", t.TempDir(), "--db", "mysql://x"}, &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), "postgres://") {
		t.Errorf("--db mysql://x: exit %d, stderr %q; want 2 and what --db takes", code, stderr.String())
	}
	// AGENTDESK_DB does not concern a command that opens no database.
	t.Setenv("AGENTDESK_DB", "mysql://x")
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"version"}, &stdout, &stderr, nil); code != 0 {
		t.Errorf("version with AGENTDESK_DB set: exit %d, stderr %q", code, stderr.String())
	}
	// Without --db, SQLite in the data directory, as before.
	t.Setenv("AGENTDESK_DB", "")
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"project", "list", "--data", t.TempDir()}, &stdout, &stderr, nil); code != 0 || !strings.Contains(stdout.String(), "Personal") {
		t.Errorf("project list on SQLite: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
