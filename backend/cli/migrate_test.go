package cli

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestMigrateCommand: agentdesk migrate copies the data directory into PostgreSQL while
// a server runs on it, prints the row counts as one JSON object on stdout and a summary
// on stderr, never the password; a second run into the now full database exits 1 and
// says why; a bad --to or a --db is a usage error.
func TestMigrateCommand(t *testing.T) {
	env := testenv.Start(t) // runs on the data directory during the copy
	if _, err := env.Service.CreateTask(t.Context(), auth.Owner(env.Project.ID), service.CreateTaskInput{Summary: "Move to PostgreSQL"}, ""); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	password, ok := u.User.Password()
	if !ok { // the test cluster trusts its user: any password does
		password = "s3cret-pw"
		u.User = url.UserPassword(u.User.Username(), password)
	}
	to := u.String()

	stdout, stderr, code := cli("migrate", "--data", env.DataDir, "--to", to)
	if code != 0 {
		t.Fatalf("migrate: exit %d, stderr %q", code, stderr)
	}
	var counts map[string]int64
	if err := json.Unmarshal([]byte(stdout), &counts); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	if counts["projects"] != 1 || counts["tasks"] != 1 || counts["events"] < 1 || len(counts) < 30 {
		t.Errorf("row counts %v", counts)
	}
	if !strings.Contains(stderr, "copied ") || !strings.Contains(stderr, " rows into ") {
		t.Errorf("no summary on stderr: %q", stderr)
	}
	if strings.Contains(stdout+stderr, password) {
		t.Errorf("the password is printed: %q %q", stdout, stderr)
	}

	_, stderr, code = cli("migrate", "--data", env.DataDir, "--to", to)
	if code != 1 || !strings.Contains(stderr, "not empty") || strings.Contains(stderr, password) {
		t.Errorf("second migrate into the full database: exit %d, stderr %q; want 1 and why", code, stderr)
	}

	for _, args := range [][]string{
		{"migrate", "--data", env.DataDir},
		{"migrate", "--data", env.DataDir, "--to", "mysql://u:s3cret-pw@h/db"},
		{"migrate", "--data", env.DataDir, "--to", to, "--db", to},
	} {
		_, stderr, code := cli(args...)
		if code != 2 || strings.Contains(stderr, "s3cret-pw") {
			t.Errorf("%q: exit %d, stderr %q; want 2, no password", args[1:], code, stderr)
		}
	}
	if help := stdoutOf(t, "migrate", "--help"); !strings.Contains(help, "agentdesk migrate --to") || !strings.Contains(help, "snapshot") {
		t.Errorf("migrate --help: %q", help)
	}
	// A server that is not there: the error names it without the password.
	_, stderr, code = cli("migrate", "--data", env.DataDir, "--to", "postgres://agentdesk:s3cret-pw@127.0.0.1:1/agentdesk?connect_timeout=5")
	if code != 1 || strings.Contains(stderr, "s3cret-pw") || !strings.Contains(stderr, "127.0.0.1") {
		t.Errorf("unreachable server: exit %d, stderr %q", code, stderr)
	}
}
