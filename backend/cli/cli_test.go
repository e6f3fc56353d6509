package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestSubcommandHelp: every subcommand's --help and -h prints its usage on stdout and
// exits 0; a bad flag still exits 2 with one line on stderr.
func TestSubcommandHelp(t *testing.T) {
	commands := [][]string{{"version"}, {"project", "create"}, {"project", "list"}, {"agent", "create"},
		{"agent", "env"}, {"agent", "run"}, {"token", "create"}, {"backup"}, {"restore"}, {"agent"}, {"project"}, {"token"}, {}}
	for _, cmd := range commands {
		for _, flag := range []string{"--help", "-h", "-help"} {
			args := append(append([]string{}, cmd...), flag)
			var stdout, stderr bytes.Buffer
			code := Main(args, &stdout, &stderr, nil)
			if code != 0 || stderr.Len() != 0 {
				t.Errorf("agentdesk %s: exit %d, stderr %q; want 0 and nothing", strings.Join(args, " "), code, stderr.String())
				continue
			}
			if want := "agentdesk " + strings.Join(cmd, " "); !strings.Contains(stdout.String(), want) {
				t.Errorf("agentdesk %s: stdout %q does not show the usage of %q", strings.Join(args, " "), stdout.String(), want)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"agent", "env", "--bogus"}, &stdout, &stderr, nil); code != 2 {
		t.Errorf("a bad flag: exit %d, want 2 (stderr %q)", code, stderr.String())
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "bogus") {
		t.Errorf("a bad flag: stdout %q stderr %q", stdout.String(), stderr.String())
	}
	if !strings.Contains(stdoutOf(t, "agent", "env", "--help"), "-project") {
		t.Error("agent env --help does not list its flags")
	}
	// PostgreSQL is a working engine (TestDBPostgres): the help does not say it is refused.
	if help := stdoutOf(t, "--help"); !strings.Contains(help, "--db URL") || strings.Contains(help, "not complete") {
		t.Errorf("--help on --db: %q", help)
	}
}

func stdoutOf(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	Main(args, &stdout, &stderr, nil)
	return stdout.String()
}

// TestVersion: `agentdesk version` and `agentdesk --version` print the same line, with the
// version, commit and build date, and take no argument; a bad AGENTDESK_DB is not their concern.
func TestVersion(t *testing.T) {
	t.Setenv("AGENTDESK_DB", "mysql://x")
	want := "agentdesk dev (commit unknown, built unknown)\n" // a test binary is not built by the Makefile
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(args, &stdout, &stderr, nil); code != 0 || stdout.String() != want || stderr.Len() != 0 {
			t.Errorf("agentdesk %s: exit %d, stdout %q, stderr %q; want 0 and %q", strings.Join(args, " "), code, stdout.String(), stderr.String(), want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"--version", "extra"}, &stdout, &stderr, nil); code != 2 || stdout.Len() != 0 {
		t.Errorf("agentdesk --version extra: exit %d, stdout %q; want 2", code, stdout.String())
	}
}
