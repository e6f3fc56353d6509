package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// The npm clients these tests run (testdata/nodeclient and testdata/inspector), both
// installed by `make mcpclients`.
var (
	nodeClientDir = filepath.Join("testdata", "nodeclient")
	inspectorDir  = filepath.Join("testdata", "inspector")
)

// needNode returns node, once the npm package pkg is installed in dir. Without them (a
// fresh clone) the test skips, so `go test ./...` needs no npm; `make test` sets
// AGENTDESK_REQUIRE_MCPCLIENTS=1, and then anything missing fails the test: CI can never
// skip it silently.
func needNode(t *testing.T, dir, pkg string) string {
	t.Helper()
	why := ""
	node, err := exec.LookPath("node")
	if err != nil {
		why = "node is not installed: this test runs an npm MCP client with Node.js"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))); err != nil {
		why = pkg + " is not installed: run `make mcpclients` (npm ci --prefix backend/mcp/" + filepath.ToSlash(dir) + ")"
	}
	switch {
	case why == "":
		return node
	case os.Getenv("AGENTDESK_REQUIRE_MCPCLIENTS") != "":
		t.Fatal(why + " (AGENTDESK_REQUIRE_MCPCLIENTS is set)")
	default:
		t.Skip(why)
	}
	return ""
}

// TestTypeScriptSDKClient runs the official TypeScript SDK as a client
// (testdata/nodeclient/client.mjs) over both transports against a real server: the
// tools listed, create_task, ask_human answered over REST while it waits, and the
// question's task read as a resource.
func TestTypeScriptSDKClient(t *testing.T) {
	node := needNode(t, nodeClientDir, "@modelcontextprotocol/sdk")
	e := testenv.Start(t)
	person := e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)
	agent := agentCred(t, e, "ts-agent")
	agentTools := []string{"ask_human", "create_task", "get_task", "list_conversations", "list_tasks", "post_message", "read_messages", "update_task"}
	cases := []struct {
		mode, who string
		env       []string
		tools     []string
	}{
		{"stdio", "ts-agent", []string{"AGENTDESK_BIN=" + binary, "SERVICE_PROJECT_ID=" + agent.project, "AGENT_NAME=" + agent.agent,
			"SERVICE_API_TOKEN=" + agent.headers.Get("X-Task-Authorization")}, agentTools},
		{"http", "", []string{"AGENTDESK_TOKEN=" + e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)},
			[]string{"answer_question", "ask_human", "create_task", "get_task", "list_tasks", "update_task"}},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			question := "May I drop the legacy table? (TypeScript SDK over " + c.mode + ")"
			out := runNode(t, node, nodeClientDir, append(c.env, "AGENTDESK_URL="+e.URL, "QUESTION="+question), "client.mjs", c.mode)

			var tools struct{ Tools []string }
			out.next(&tools)
			if !slices.Equal(tools.Tools, c.tools) {
				t.Errorf("tools = %v, want %v", tools.Tools, c.tools)
			}
			var created struct{ Created model.Task }
			out.next(&created)
			if got := created.Created; got.ID == 0 || got.Summary != "Filed by the TypeScript SDK over "+c.mode || len(got.Steps) != 2 || got.AgentName != "" {
				t.Errorf("created %+v", got)
			}
			var asking struct{ Asking string }
			if out.next(&asking); asking.Asking != question {
				t.Fatalf("asking %q", asking.Asking)
			}
			task := waitingTask(t, e, question)
			if task.AgentName != c.who {
				t.Errorf("the question's task is assigned to %q, want %q", task.AgentName, c.who)
			}
			resp := e.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", task.ID), Token: person,
				Body: map[string]any{"response": "Yes, drop it."}})
			if resp.Status != http.StatusOK {
				t.Fatalf("respond: %d %s", resp.Status, resp.Body)
			}
			var answered struct {
				Answered struct {
					Status, Answer string
					TaskID         int64 `json:"task_id"`
				}
				Progress int
			}
			out.next(&answered)
			if a := answered.Answered; a.Status != "answered" || a.Answer != "Yes, drop it." || a.TaskID != task.ID || answered.Progress < 1 {
				t.Errorf("ask_human returned %+v after %d progress notifications", answered.Answered, answered.Progress)
			}
			var resource struct{ Resource model.Task }
			out.next(&resource)
			if r := resource.Resource; r.ID != task.ID || r.Status != model.StatusDoing || r.Summary == "" {
				t.Errorf("resource agentdesk://tasks/%d = %+v", task.ID, r)
			}
			out.wait()
		})
	}
}

// TestInspectorListsTools runs the MCP Inspector's CLI (testdata/inspector, the same
// command as `make mcp-inspect`) against the built binary over stdio and against /mcp.
func TestInspectorListsTools(t *testing.T) {
	node := needNode(t, inspectorDir, "@modelcontextprotocol/inspector")
	e := testenv.Start(t)
	agent := agentCred(t, e, "inspected")
	token := e.Token(t, e.Project.ID, auth.TaskRead)
	cli := filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"stdio", []string{"-e", "AGENTDESK_URL=" + e.URL, "-e", "SERVICE_PROJECT_ID=" + agent.project, "-e", "AGENT_NAME=" + agent.agent,
			"-e", "SERVICE_API_TOKEN=" + agent.headers.Get("X-Task-Authorization"), binary, "mcp"},
			[]string{"ask_human", "create_task", "get_task", "list_conversations", "list_tasks", "post_message", "read_messages", "update_task"}},
		{"http", []string{e.URL + "/mcp", "--header", "Authorization: Bearer " + token}, []string{"get_task", "list_tasks"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{cli, "--cli"}, c.args...)
			out := runNode(t, node, inspectorDir, nil, append(args, "--method", "tools/list")...)
			var list struct {
				Tools []struct{ Name, Description string }
			}
			out.all(&list)
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" {
					t.Errorf("%s has no description", tool.Name)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, c.want) {
				t.Errorf("the Inspector lists %v, want %v", names, c.want)
			}
		})
	}
}

// nodeRun is a node process's stdout, read as it comes.
type nodeRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *bufio.Reader
	stderr *strings.Builder
}

// runNode starts node with args in dir, its environment os.Environ() plus env and a
// HOME of its own (the Inspector keeps state there).
func runNode(t *testing.T, node, dir string, env []string, args ...string) *nodeRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	r := &nodeRun{t: t, cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = r.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stdout = bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return r
}

// next decodes the next line the process prints into v.
func (r *nodeRun) next(v any) {
	r.t.Helper()
	line, err := r.stdout.ReadBytes('\n')
	if err != nil {
		r.t.Fatalf("the client ended early: %v; stderr: %s", err, r.stderr)
	}
	if err := json.Unmarshal(line, v); err != nil {
		r.t.Fatalf("the client printed %s (%v); stderr: %s", line, err, r.stderr)
	}
}

// all decodes everything the process prints, once it has ended well, into v.
func (r *nodeRun) all(v any) {
	r.t.Helper()
	if err := json.NewDecoder(r.stdout).Decode(v); err != nil {
		r.t.Fatalf("decode the output: %v; stderr: %s", err, r.stderr)
	}
	r.wait()
}

// wait waits for the process to end, which must be with status 0.
func (r *nodeRun) wait() {
	r.t.Helper()
	if err := r.cmd.Wait(); err != nil {
		r.t.Fatalf("the client exited: %v; stderr: %s", err, r.stderr)
	}
}
