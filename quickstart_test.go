package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestQuickStart runs the README's quick start as a person pastes it: the sh blocks of
// its "Quick start" section, in order, in one bash, from a directory whose bin/agentdesk
// is the binary under test, on a new data directory and a free port (AGENTDESK_DATA and
// AGENTDESK_ADDR, which every command reads). Its `make build` is what `make test`
// runs before the tests, so here it only checks that bin/agentdesk is there. The block
// must end with the question answered; the task then reaches Done with the answer in
// its conversation. So the README cannot drift from what the commands do.
func TestQuickStart(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is required for this test (the quick start uses it); .ci/run installs it")
	}
	blocks := quickStartBlocks(t)
	dir := t.TempDir()
	for _, d := range []string{"bin", "stub"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(binary, filepath.Join(dir, "bin", "agentdesk")); err != nil {
		t.Fatal(err)
	}
	makeStub := "#!/bin/sh\n[ \"$*\" = build ] && [ -x bin/agentdesk ] || { echo \"make $*: not what the quick start runs\" >&2; exit 1; }\n"
	if err := os.WriteFile(filepath.Join(dir, "stub", "make"), []byte(makeStub), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	// The README's lines, then one of the test's own: what it needs to check the outcome.
	script := "set -e\n" + strings.Join(blocks, "\n") + "\necho \"quickstart: task=$TASK token=$TOKEN url=$U\"\n"
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTDESK_") && !strings.HasPrefix(kv, "SERVICE_") && !strings.HasPrefix(kv, "AGENT_") &&
			!strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "AGENTDESK_DATA="+filepath.Join(dir, "data"), "AGENTDESK_ADDR="+addr, "HOME="+dir,
		"PATH="+filepath.Join(dir, "stub")+":"+os.Getenv("PATH"))
	// A file, not a pipe: the server and the agent it starts in the background keep
	// their output open after bash exits.
	out, err := os.Create(filepath.Join(dir, "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its background jobs too, to stop them after
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	output := func() string { b, _ := os.ReadFile(out.Name()); return string(b) }
	runErr := cmd.Run()
	if cmd.Process != nil {
		t.Cleanup(func() { stopGroup(t, cmd.Process.Pid) })
	}
	if runErr != nil {
		t.Fatalf("the quick start failed: %v\n%s", runErr, output())
	}

	said := output()
	m := regexp.MustCompile(`quickstart: task=(\d+) token=(\S+) url=(\S+)`).FindStringSubmatch(said)
	if m == nil {
		t.Fatalf("the quick start set no TASK, TOKEN or U:\n%s", said)
	}
	if m[3] != "http://"+addr {
		t.Errorf("U is %s, want the running server's http://%s", m[3], addr)
	}
	for _, want := range []string{`{"status":"ok"}`, `"waiting_details":"Formal or casual?"`} {
		if !strings.Contains(said, want) {
			t.Errorf("the quick start's output lacks %s", want)
		}
	}
	if strings.Contains(said, `"error":`) || strings.Contains(said, "level=ERROR") {
		t.Errorf("the quick start met an error")
	}
	var task struct {
		Status       string
		Conversation []struct{ Role, Content string }
	}
	for deadline := time.Now().Add(20 * time.Second); task.Status != "Done" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		_, raw := call(t, "GET", fmt.Sprintf("%s/api/tasks/%s", m[3], m[1]), m[2], "")
		json.Unmarshal(raw, &task)
	}
	answered := false
	for _, msg := range task.Conversation {
		answered = answered || (msg.Role == "user" && msg.Content == "Casual")
	}
	if task.Status != "Done" || !answered {
		t.Errorf("after the quick start the task is %s, conversation %+v; want Done with the answer", task.Status, task.Conversation)
	}
	t.Logf("output:\n%s", said)
}

// quickStartBlocks are the sh blocks of the README's "Quick start" section, in order.
func quickStartBlocks(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Quick start\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) == 0 {
		t.Fatal("the README's quick start has no sh block")
	}
	return blocks
}

// stopGroup stops what a shell left running in its process group (the server and the
// agent the quick start starts with &): SIGTERM, then SIGKILL after 10 s.
func stopGroup(t *testing.T, pgid int) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
			return
		}
	}
	t.Logf("the quick start's background jobs ignored SIGTERM for 10 s: killing them")
	syscall.Kill(-pgid, syscall.SIGKILL)
}
