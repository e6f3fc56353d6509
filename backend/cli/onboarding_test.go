package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main(args, &out, &errOut, nil); code != 0 {
		t.Fatalf("agentdesk %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String(), errOut.String()
}

// A command that creates the database says so on stderr, once, with the path: a
// mistyped --data is noticed. project id prints the default project's id alone.
func TestNewDatabaseNoteAndProjectID(t *testing.T) {
	data := filepath.Join(t.TempDir(), "mistyped")
	out, errOut := runCLI(t, "project", "id", "--data", data)
	wantPath := filepath.Join(data, server.DBFile)
	if n := strings.Count(errOut, "\n"); n != 1 || !strings.Contains(errOut, "created a new, empty database at "+wantPath) {
		t.Errorf("first command's stderr %q: want one line naming %s", errOut, wantPath)
	}
	id := strings.TrimSpace(out)
	if !strings.HasPrefix(id, "prj_") || strings.Count(out, "\n") != 1 {
		t.Errorf("project id printed %q, want one prj_ id", out)
	}
	list, errOut := runCLI(t, "project", "list", "--data", data)
	if errOut != "" {
		t.Errorf("second command's stderr %q: the database exists now, nothing to say", errOut)
	}
	var first struct{ ID string }
	json.Unmarshal([]byte(strings.SplitN(list, "\n", 2)[0]), &first)
	if first.ID != id {
		t.Errorf("project id %q, project list's first %q", id, first.ID)
	}
	// Another project later does not change the default.
	runCLI(t, "project", "create", "--name", "second", "--data", data)
	if again, _ := runCLI(t, "project", "id", "--data", data); strings.TrimSpace(again) != id {
		t.Errorf("project id after another project: %q, want %q", again, id)
	}
}

// agent env without --url uses the URL a server running on the data directory noted
// (server.url), and ignores a note whose process is gone.
func TestAgentEnvDefaultsToTheRunningServer(t *testing.T) {
	data := t.TempDir()
	project, _ := runCLI(t, "project", "id", "--data", data)
	runCLI(t, "agent", "create", "--project", strings.TrimSpace(project), "--name", "w", "--data", data)
	envURL := func() string {
		out, _ := runCLI(t, "agent", "env", "--project", strings.TrimSpace(project), "--name", "w", "--data", data)
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "export AGENTDESK_URL="); ok {
				return v
			}
		}
		t.Fatalf("no AGENTDESK_URL in %q", out)
		return ""
	}
	t.Setenv("AGENTDESK_ADDR", "127.0.0.1:9999")
	if got := envURL(); got != "http://127.0.0.1:9999" {
		t.Errorf("no server: AGENTDESK_URL=%s, want the default address", got)
	}
	note := func(url string, pid int) {
		if err := os.WriteFile(filepath.Join(data, server.URLFile), []byte(url+"\n"+strconv.Itoa(pid)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	note("http://127.0.0.1:4321", os.Getpid()) // a live process
	if got := envURL(); got != "http://127.0.0.1:4321" {
		t.Errorf("a running server's note: AGENTDESK_URL=%s", got)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal("true(1), which every system has, did not run:", err)
	}
	note("http://127.0.0.1:4321", dead.Process.Pid)
	if got := envURL(); got != "http://127.0.0.1:9999" {
		t.Errorf("a stale note (its process gone): AGENTDESK_URL=%s, want the default", got)
	}
	if out, _ := runCLI(t, "agent", "env", "--project", strings.TrimSpace(project), "--name", "w", "--url", "http://x:1", "--data", data); !strings.Contains(out, "AGENTDESK_URL=http://x:1") {
		t.Errorf("--url still wins: %q", out)
	}
}
