package api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestGeneratedGoClient does what a Go integrator does: it generates a client from the
// served /api/openapi.json with oapi-codegen (the version pinned as a tool of the
// testdata/goclient module, whose go.sum locks it), builds testdata/goclient's program
// against it, and runs it against a real server: a conversation, a task linked to it, a
// question and its answer, a stale If-Match, a page of a list and a typed 404. The
// document must need no edit, and its answers must decode into the generated types.
func TestGeneratedGoClient(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on the PATH")
	}
	env := testenv.Start(t)
	pid := env.Project.ID
	agent := env.Agent(t, pid, "writer")
	token := env.Token(t, pid, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)

	doc := env.Do(t, testenv.Request{Method: "GET", Path: "/api/openapi.json"})
	if doc.Status != 200 {
		t.Fatalf("GET /api/openapi.json: %d", doc.Status)
	}
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "goclient", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cold module cache downloads the generator
	defer cancel()
	goCmd := func(extraEnv []string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=-mod=readonly"}, extraEnv...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if err := os.Mkdir(filepath.Join(dir, "agentdesk"), 0o755); err != nil {
		t.Fatal(err)
	}
	goCmd(nil, "tool", "oapi-codegen", "-generate", "types,client", "-package", "agentdesk", "-o", "agentdesk/client.gen.go", "openapi.json")
	goCmd(nil, "vet", "./...")
	out := goCmd([]string{"AGENTDESK_URL=" + env.URL, "AGENTDESK_TOKEN=" + token, "AGENTDESK_PROJECT=" + pid,
		"AGENTDESK_AGENT_ID=" + strconv.FormatInt(agent.ID, 10)}, "run", ".")
	if !strings.HasSuffix(out, "ok\n") {
		t.Fatalf("the program printed:\n%s", out)
	}
	t.Logf("the generated client's program:\n%s", out)
}
