package a2a_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
)

// jsClientDir holds the JavaScript SDK's client, installed by `make a2aclients`.
var jsClientDir = filepath.Join("testdata", "jsclient")

// needJSClient returns node once @a2a-js/sdk is installed. Without them (a fresh clone)
// the test skips, so `go test ./...` needs no npm; `make test` sets
// AGENTDESK_REQUIRE_A2ACLIENTS=1, and then anything missing fails it.
func needJSClient(t *testing.T) string {
	t.Helper()
	why := ""
	node, err := exec.LookPath("node")
	if err != nil {
		why = "node is not installed: this test runs the A2A JavaScript SDK with Node.js"
	} else if _, err := os.Stat(filepath.Join(jsClientDir, "node_modules", "@a2a-js", "sdk")); err != nil {
		why = "@a2a-js/sdk is not installed: run `make a2aclients` (npm ci --prefix backend/a2a/testdata/jsclient)"
	}
	switch {
	case why == "":
		return node
	case os.Getenv("AGENTDESK_REQUIRE_A2ACLIENTS") != "":
		t.Fatal(why + " (AGENTDESK_REQUIRE_A2ACLIENTS is set)")
	default:
		t.Skip(why)
	}
	return ""
}

// TestJavaScriptSDKClient: @a2a-js/sdk 0.3.14 (A2A 0.3.0, the version a2a-go v0.3.3
// speaks; its 1.x releases speak A2A 1.0) resolves an agent's card, sends a message, and
// streams a second one to completion.
func TestJavaScriptSDKClient(t *testing.T) {
	node := needJSClient(t)
	w := newWorld(t, auth.TaskRead, auth.TaskWrite)
	cmd := exec.Command(node, "client.mjs", w.base, w.env.Token(t, w.project, auth.TaskRead, auth.TaskWrite))
	cmd.Dir = jsClientDir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	defer func() {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("client.mjs: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("client.mjs did not end")
		}
	}()
	type line struct {
		Step, Kind, ID, State, Name, ProtocolVersion, URL, Artifact string
		Final                                                       bool
	}
	lines := make(chan line)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l line
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				t.Errorf("client.mjs printed %q", sc.Text())
				continue
			}
			lines <- l
		}
		done <- cmd.Wait()
	}()
	read := func() line {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("client.mjs ended early")
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("client.mjs printed nothing in 20 s")
		}
		return line{}
	}

	if card := read(); card.Step != "card" || card.Name != "worker" || card.ProtocolVersion != "0.3.0" || card.URL != w.base {
		t.Fatalf("card: %+v", card)
	}
	sent := read()
	if sent.Step != "send" || sent.Kind != "task" || sent.State != string(a2a.TaskStateSubmitted) {
		t.Fatalf("send: %+v", sent)
	}
	if task := w.board(t, a2a.TaskID(sent.ID)); task.Summary != "Send from JavaScript" || task.Details != "with details" || task.AgentName != "worker" {
		t.Errorf("the sent task on the board: %+v", task)
	}
	first := read()
	if first.Step != "event" || first.Kind != "task" || first.State != string(a2a.TaskStateSubmitted) {
		t.Fatalf("the stream's first event: %+v", first)
	}
	w.callback(t, a2a.TaskID(first.ID), `"status":"Done","message":"Streamed and done"`)
	if art := read(); art.Kind != "artifact-update" || art.Artifact != "Streamed and done" {
		t.Errorf("want the result as an artifact, got %+v", art)
	}
	if end := read(); end.Kind != "status-update" || end.State != string(a2a.TaskStateCompleted) || !end.Final {
		t.Errorf("want the final completed update, got %+v", end)
	}
	if task := w.board(t, a2a.TaskID(first.ID)); task.Status != model.StatusDone {
		t.Errorf("the streamed task is %s on the board; want Done", task.Status)
	}
}
