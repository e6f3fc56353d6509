package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
)

// TestDBRefusesPostgres: --db and AGENTDESK_DB are read on --serve, the desktop and
// every command that opens the database. Until the PostgreSQL engine is complete, a
// postgres:// URL is refused with exit 2 and a message that says so (without the
// password), before anything is opened; any other value is a usage error.
func TestDBRefusesPostgres(t *testing.T) {
	const url = "postgres://agentdesk:s3cret@db.example.com/agentdesk"
	cases := []struct {
		args []string
		env  string
	}{
		{[]string{"--serve", "--data", t.TempDir(), "--db", url}, ""},
		{[]string{"--serve", "--data", t.TempDir()}, url},
		{[]string{"--data", t.TempDir(), "--db", url}, ""}, // the desktop window
		{[]string{"project", "list", "--data", t.TempDir(), "--db", url}, ""},
		{[]string{"project", "list", "--data", t.TempDir()}, url},
		{[]string{"--db", url, "project", "list", "--data", t.TempDir()}, ""},
		{[]string{"token", "create", "--data", t.TempDir(), "--project", "p", "--name", "n", "--scopes", "tasks:read"}, url},
		{[]string{"backup", "--data", t.TempDir(), "--out", t.TempDir() + "/backup.db"}, url},
	}
	for _, c := range cases {
		t.Setenv("AGENTDESK_DB", c.env)
		var stdout, stderr bytes.Buffer
		code := Main(c.args, &stdout, &stderr, func(server.Config) int { t.Errorf("%q opened the desktop", c.args); return 0 })
		if code != 2 || !strings.Contains(stderr.String(), "PostgreSQL engine is not complete yet") {
			t.Errorf("%q (AGENTDESK_DB=%q): exit %d, stderr %q; want 2 and the engine refused", c.args, c.env, code, stderr.String())
		}
		if strings.Contains(stderr.String(), "s3cret") {
			t.Errorf("%q: the password is printed: %q", c.args, stderr.String())
		}
	}

	t.Setenv("AGENTDESK_DB", "")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"project", "list", "--data", t.TempDir(), "--db", "mysql://x"}, &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), "postgres://") {
		t.Errorf("--db mysql://x: exit %d, stderr %q; want 2 and what --db takes", code, stderr.String())
	}
	// AGENTDESK_DB does not concern a command that opens no database.
	t.Setenv("AGENTDESK_DB", url)
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
