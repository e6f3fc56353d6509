package main

// These tests build the real agentdesk binary and run it as a child process: the CLI's
// outputs and exit codes, a task that survives kill -9, and a clean SIGTERM.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentdesk-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "agentdesk")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build agentdesk: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary and returns stdout, stderr and the exit status.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "AGENTDESK_DATA=", "AGENTDESK_ADDR=")
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("agentdesk %v: exit %d: %s", args, code, errOut)
	}
	return out
}

func TestCLI(t *testing.T) {
	data := t.TempDir()
	var project struct{ ID string }
	raw := mustCLI(t, "project", "create", "--name", "Team", "--namespace", "team-a", "--data", data)
	var fields map[string]any
	if err := json.Unmarshal([]byte(raw), &fields); err != nil || strings.Count(raw, "\n") != 1 {
		t.Fatalf("project create printed %q", raw)
	}
	for _, k := range []string{"id", "name", "namespace", "token_secret"} {
		if s, _ := fields[k].(string); s == "" {
			t.Fatalf("project create lacks %s: %s", k, raw)
		}
	}
	project.ID = fields["id"].(string)
	if fields["name"] != "Team" || fields["namespace"] != "team-a" {
		t.Fatalf("project create printed %s", raw)
	}

	list := mustCLI(t, "project", "list", "--data", data)
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 2 || !strings.Contains(lines[0], `"name":"Personal","namespace":"default"`) || !strings.Contains(lines[1], project.ID) {
		t.Fatalf("project list printed %q", list)
	}

	// --data may come before the command too.
	agent := mustCLI(t, "--data", data, "agent", "create", "--project", project.ID, "--name", "worker")
	if !regexp.MustCompile(`^\{"id":\d+,"name":"worker"\}\n$`).MatchString(agent) {
		t.Fatalf("agent create printed %q", agent)
	}

	env := mustCLI(t, "agent", "env", "--project", project.ID, "--name", "worker", "--url", "http://127.0.0.1:9999", "--data", data)
	var names []string
	values := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		m := regexp.MustCompile(`^export ([A-Z_]+)=(.*)$`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("agent env line %q", line)
		}
		names = append(names, m[1])
		values[m[1]] = m[2]
	}
	if got := strings.Join(names, " "); got != "SERVICE_NAMESPACE SERVICE_PROJECT_ID SERVICE_TOKEN_SECRET AGENT_NAME SERVICE_API_TOKEN AGENTDESK_URL" {
		t.Fatalf("agent env names: %s", got)
	}
	if values["SERVICE_PROJECT_ID"] != project.ID || values["SERVICE_NAMESPACE"] != "team-a" || values["AGENT_NAME"] != "worker" ||
		values["SERVICE_TOKEN_SECRET"] != fields["token_secret"] || values["AGENTDESK_URL"] != "http://127.0.0.1:9999" ||
		!regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(values["SERVICE_API_TOKEN"]) {
		t.Fatalf("agent env values: %v", values)
	}

	// rotate-secret prints the project with a new secret, which agent env then gives out.
	raw = mustCLI(t, "project", "rotate-secret", "--project", project.ID, "--data", data)
	var rotated map[string]string
	if err := json.Unmarshal([]byte(raw), &rotated); err != nil || strings.Count(raw, "\n") != 1 {
		t.Fatalf("project rotate-secret printed %q", raw)
	}
	if rotated["id"] != project.ID || rotated["name"] != "Team" || rotated["namespace"] != "team-a" ||
		len(rotated["token_secret"]) != 40 || rotated["token_secret"] == fields["token_secret"] {
		t.Fatalf("project rotate-secret printed %s (before: %s)", raw, fields["token_secret"])
	}
	env = mustCLI(t, "agent", "env", "--project", project.ID, "--name", "worker", "--data", data)
	if !strings.Contains(env, "export SERVICE_TOKEN_SECRET="+rotated["token_secret"]+"\n") {
		t.Fatalf("agent env after rotate-secret: %s", env)
	}
	if _, errOut, code := run(t, "project", "rotate-secret", "--project", "prj_nope", "--data", data); code == 0 || !strings.Contains(errOut, "not found") {
		t.Fatalf("rotate-secret of an unknown project: exit %d: %s", code, errOut)
	}

	token := mustCLI(t, "token", "create", "--project", project.ID, "--name", "ci", "--scopes", "task:read,task:write", "--data", data)
	if !regexp.MustCompile(`^adk_[0-9A-Za-z]{32,}\n$`).MatchString(token) {
		t.Fatalf("token create printed %q", token)
	}
	data2 := mustCLI(t, "token", "create", "--project", project.ID, "--name", "kb", "--scopes", "vector:read", "--type", "data", "--data", data)
	if !strings.HasPrefix(data2, "adk_") {
		t.Fatalf("data token printed %q", data2)
	}

	if v := mustCLI(t, "version"); strings.TrimSpace(v) == "" || strings.Count(v, "\n") != 1 {
		t.Fatalf("version printed %q", v)
	}

	out := filepath.Join(t.TempDir(), "backup.db")
	if got := mustCLI(t, "backup", "--out", out, "--data", data); strings.TrimSpace(got) != out {
		t.Fatalf("backup printed %q, want %s", got, out)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
	// The backup is a whole agentdesk database: a server started on it has the project.
	restored := t.TempDir()
	if err := os.Rename(out, filepath.Join(restored, "agentdesk.db")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "agent", "env", "--project", project.ID, "--name", "worker", "--data", restored); code != 0 {
		t.Fatalf("restored backup lacks the project: %s", errOut)
	}

	// Errors: bad flags and arguments exit 2 with one line; runtime failures exit 1.
	for _, args := range [][]string{
		{"--bogus"},
		{"project", "create"},
		{"project", "create", "--name"},
		{"agent", "create", "--name", "x", "--data", data},
		{"token", "create", "--project", project.ID, "--name", "x", "--scopes", "task:read", "--type", "gold", "--data", data},
		{"token", "create", "--project", project.ID, "--name", "x", "--scopes", "task:read", "--expires", "soon", "--data", data},
		{"frobnicate"},
		{"version", "extra"},
		{"backup", "--data", data},
		{"--serve", "version"},
	} {
		_, errOut, code := run(t, args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "agentdesk: ") {
			t.Errorf("agentdesk %v: exit %d, stderr %q; want exit 2 and one line", args, code, errOut)
		}
	}
	for _, args := range [][]string{
		{"agent", "env", "--project", project.ID, "--name", "ghost", "--data", data},
		{"agent", "create", "--project", "prj_nope", "--name", "x", "--data", data},
		{"agent", "create", "--project", project.ID, "--name", "worker", "--data", data},
		{"token", "create", "--project", project.ID, "--name", "x", "--scopes", "task:fly", "--data", data},
	} {
		_, errOut, code := run(t, args...)
		if code != 1 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("agentdesk %v: exit %d, stderr %q; want exit 1 and one line", args, code, errOut)
		}
	}
	// Without the desktop shell, no arguments prints a hint and exits 2.
	_, errOut, code := run(t, "--data", data)
	if code != 2 || !strings.Contains(errOut, "--serve") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("no-desktop build: exit %d, %q", code, errOut)
	}
}

// server is a running agentdesk child process.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *testenv.SyncBuffer
}

// startServer runs agentdesk --serve on a free loopback port and waits for its URL.
func startServer(t *testing.T, data string, flags ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--serve", "--addr", "127.0.0.1:0", "--data", data}, flags...)...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &testenv.SyncBuffer{}}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.Write([]byte(line + "\n"))
			if m := regexp.MustCompile(`url=(http://\S+)`).FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case s.url = <-found:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server did not start: %s", s.stderr.String())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return s
}

func call(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func setupProject(t *testing.T, data string) string {
	t.Helper()
	var p struct{ ID string }
	json.Unmarshal([]byte(mustCLI(t, "project", "create", "--name", "p", "--data", data)), &p)
	return strings.TrimSpace(mustCLI(t, "token", "create", "--project", p.ID, "--name", "t", "--scopes", "task:read,task:write", "--data", data))
}

// TestCreateSurvivesKill9: every create that got its 201 is there after kill -9.
func TestCreateSurvivesKill9(t *testing.T) {
	data := t.TempDir()
	token := setupProject(t, data)
	srv := startServer(t, data)

	// Creates run from 8 clients; the server is killed while they are in flight, once
	// killAfter of them are acknowledged (a count, not a time: a busy machine only
	// makes the wait longer).
	const killAfter = 200
	var mu sync.Mutex
	acked := map[int64]string{}
	reached := make(chan struct{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				summary := fmt.Sprintf("client %d task %d", c, i)
				req, _ := http.NewRequest("POST", srv.url+"/api/tasks", strings.NewReader(`{"summary":"`+summary+`","steps":[{"title":"a"}]}`))
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return // the server is gone
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusCreated {
					var task struct{ ID int64 }
					json.Unmarshal(raw, &task)
					mu.Lock()
					acked[task.ID] = summary
					if len(acked) == killAfter { // ids are unique: reached exactly once
						close(reached)
					}
					mu.Unlock()
				}
			}
		}()
	}
	clientsDone := make(chan struct{})
	go func() { wg.Wait(); close(clientsDone) }()
	select {
	case <-reached:
	case <-clientsDone:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the clients stopped with %d creates acknowledged, before %d", len(acked), killAfter)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no create was acknowledged before the kill")
	}

	again := startServer(t, data)
	status, raw := call(t, "GET", again.url+"/api/tasks", token, "")
	if status != 200 {
		t.Fatalf("list after restart: %d %s", status, raw)
	}
	var tasks []struct {
		ID      int64
		Summary string
		Steps   []struct{ Title string }
	}
	json.Unmarshal(raw, &tasks)
	have := map[int64]string{}
	for _, task := range tasks {
		if len(task.Steps) != 1 {
			t.Fatalf("task %d came back with %d steps: half written", task.ID, len(task.Steps))
		}
		have[task.ID] = task.Summary
	}
	for id, summary := range acked {
		if have[id] != summary {
			t.Fatalf("acknowledged task %d (%q) lost after kill -9; %d acknowledged, %d present", id, summary, len(acked), len(have))
		}
	}
	t.Logf("%d creates acknowledged before kill -9, all present after restart (%d rows)", len(acked), len(have))
}

// TestGracefulShutdown: SIGTERM lets the server finish, close the database and exit 0.
func TestGracefulShutdown(t *testing.T) {
	data := t.TempDir()
	token := setupProject(t, data)
	srv := startServer(t, data, "--log-level", "debug") // requests are logged at DEBUG
	if status, raw := call(t, "POST", srv.url+"/api/tasks", token, `{"summary":"before stop"}`); status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop after SIGTERM")
	}
	logs := srv.stderr.String()
	if !strings.Contains(logs, "stopped cleanly") {
		t.Fatalf("no clean stop in logs:\n%s", logs)
	}
	if strings.Contains(logs, token) || strings.Contains(logs, token[4:]) {
		t.Fatal("a token appears in the logs")
	}
	if !regexp.MustCompile(`msg=request method=POST path=/api/tasks status=201 ms=[0-9.]+`).MatchString(logs) {
		t.Fatalf("no structured request line:\n%s", logs)
	}
	// A clean close leaves no WAL behind to replay.
	if st, err := os.Stat(filepath.Join(data, "agentdesk.db-wal")); err == nil && st.Size() > 0 {
		t.Fatalf("WAL of %d bytes left after a clean stop", st.Size())
	}
}

// TestLogLevel: at the default level (INFO) the log says what an operator needs (where
// the server listens, that it stopped) and no line per request; --log-level or
// AGENTDESK_LOG_LEVEL takes debug, info, warn or error, and refuses anything else.
func TestLogLevel(t *testing.T) {
	data := t.TempDir()
	token := setupProject(t, data)
	srv := startServer(t, data)
	for range 3 {
		if status, raw := call(t, "GET", srv.url+"/api/tasks", token, ""); status != 200 {
			t.Fatalf("list: %d %s", status, raw)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	logs := srv.stderr.String()
	if strings.Contains(logs, "msg=request") || !strings.Contains(logs, "agentdesk is listening") || !strings.Contains(logs, "stopped cleanly") {
		t.Fatalf("at INFO, want the start and the stop and no request lines:\n%s", logs)
	}
	if _, errOut, code := run(t, "--serve", "--log-level", "loud", "--data", t.TempDir()); code != 2 || !strings.Contains(errOut, "--log-level must be debug, info, warn or error") {
		t.Fatalf("--log-level loud: exit %d, %q", code, errOut)
	}
	t.Setenv("AGENTDESK_LOG_LEVEL", "loud")
	if _, errOut, code := run(t, "--serve", "--data", t.TempDir()); code != 2 || !strings.Contains(errOut, `not "loud"`) {
		t.Fatalf("AGENTDESK_LOG_LEVEL=loud: exit %d, %q", code, errOut)
	}
}

func TestPortInUse(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data)
	addr := strings.TrimPrefix(srv.url, "http://")
	_, errOut, code := run(t, "--serve", "--addr", addr, "--data", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "already in use") || !strings.Contains(errOut, "--addr") || strings.Contains(errOut, "goroutine") {
		t.Fatalf("port in use: exit %d, %q", code, errOut)
	}
}

// TestSecondServerRefused: a second --serve on a data directory a server is running on
// exits with status 1 and names the running one's address; CLI commands still work
// beside the running server.
func TestSecondServerRefused(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data)
	// Bounded: without the lock the second server would run until killed.
	second := exec.Command(binary, "--serve", "--addr", "127.0.0.1:0", "--data", data)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	second.Env = append(os.Environ(), "AGENTDESK_DATA=", "AGENTDESK_ADDR=")
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(20*time.Second, func() { second.Process.Kill() })
	err := second.Wait()
	timer.Stop()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	}
	errOut := stderr.String()
	if code != 1 || !strings.Contains(errOut, "already serving") || !strings.Contains(errOut, srv.url) || strings.Contains(errOut, "goroutine") {
		t.Fatalf("second server: exit %d, %q; want status 1 naming %s", code, errOut, srv.url)
	}
	if out := mustCLI(t, "project", "list", "--data", data); !strings.Contains(out, `"id"`) {
		t.Fatalf("project list beside the server: %q", out)
	}
	if status, _ := call(t, "GET", srv.url+"/healthz", "", ""); status != http.StatusOK {
		t.Fatalf("the first server after the second's attempt: /healthz %d", status)
	}
}

// agentProject is a data directory with a project, a "human" token (task:read,
// task:write) and an agent, all made with the CLI, and a server on it.
type agentProject struct {
	data, project, agentName string
	token                    string
	agent                    struct{ ID int64 }
	srv                      *server
}

func newAgentProject(t *testing.T, project, agentName string) *agentProject {
	t.Helper()
	ap := &agentProject{data: t.TempDir(), agentName: agentName}
	var p struct{ ID string }
	json.Unmarshal([]byte(mustCLI(t, "project", "create", "--name", project, "--data", ap.data)), &p)
	ap.project = p.ID
	ap.token = strings.TrimSpace(mustCLI(t, "token", "create", "--project", p.ID, "--name", "human", "--scopes", "task:read,task:write", "--data", ap.data))
	json.Unmarshal([]byte(mustCLI(t, "agent", "create", "--project", p.ID, "--name", agentName, "--data", ap.data)), &ap.agent)
	ap.srv = startServer(t, ap.data)
	return ap
}

// env is the agent's environment as `agent env` prints it, as KEY=value entries, but
// for the lines that mention one of skip.
func (ap *agentProject) env(t *testing.T, skip ...string) []string {
	t.Helper()
	out := mustCLI(t, "agent", "env", "--project", ap.project, "--name", ap.agentName, "--url", ap.srv.url, "--data", ap.data)
	var env []string
lines:
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		for _, s := range skip {
			if strings.Contains(line, s) {
				continue lines
			}
		}
		kv := strings.TrimPrefix(line, "export ")
		env = append(env, strings.Trim(strings.Replace(kv, "='", "=", 1), "'"))
	}
	return env
}

// TestReferenceAgentEndToEnd: the reference agent runs as a real child process on a
// task with three steps, the second a question; a human answers through REST; the task
// reaches Done with the answer in its conversation.
func TestReferenceAgentEndToEnd(t *testing.T) {
	start := time.Now()
	ap := newAgentProject(t, "e2e", "worker")
	srv, token, agent := ap.srv, ap.token, ap.agent

	// The agent's environment comes from `agent env`, exactly as a user would paste it.
	agentEnv := append(os.Environ(), ap.env(t)...)
	agentCmd := exec.Command(binary, "agent", "run", "--name", "worker", "--poll", "1m", "--pause", "50ms")
	// A one-minute poll: within the 20 s budget below, only the event stream can wake it.
	agentCmd.Env = agentEnv
	agentLog := &testenv.SyncBuffer{}
	agentCmd.Stderr = agentLog
	if err := agentCmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		agentCmd.Process.Signal(syscall.SIGTERM)
		agentCmd.Wait()
		if t.Failed() {
			t.Logf("agent log:\n%s", agentLog.String())
		}
	}()

	status, raw := call(t, "POST", srv.url+"/api/tasks", token,
		fmt.Sprintf(`{"summary":"Plan the launch","steps":[{"title":"Gather notes"},{"title":"Which day works?"},{"title":"Send invites"}],"agent_id":%d}`, agent.ID))
	if status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	var task struct {
		ID             int64
		Status         string
		WaitingDetails *string `json:"waiting_details"`
		WaitingVersion int64   `json:"waiting_version"`
		Steps          []struct{ Status string }
		Conversation   []struct{ Role, Content string }
	}
	json.Unmarshal(raw, &task)
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			_, raw := call(t, "GET", fmt.Sprintf("%s/api/tasks/%d", srv.url, task.ID), token, "")
			json.Unmarshal(raw, &task)
			if task.Status == want {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("task never reached %s; it is %s", want, task.Status)
	}
	waitFor("Waiting")
	if task.WaitingDetails == nil || *task.WaitingDetails != "Which day works?" || task.Steps[0].Status != "completed" || task.Steps[1].Status != "in_progress" {
		t.Fatalf("waiting task: %+v", task)
	}
	status, raw = call(t, "POST", fmt.Sprintf("%s/api/tasks/%d/respond", srv.url, task.ID), token,
		fmt.Sprintf(`{"response":"Thursday","waiting_version":%d}`, task.WaitingVersion))
	if status != 200 {
		t.Fatalf("respond: %d %s", status, raw)
	}
	waitFor("Done")
	for i, s := range task.Steps {
		if s.Status != "completed" {
			t.Fatalf("step %d is %s at Done", i, s.Status)
		}
	}
	var answered, echoed bool
	for _, m := range task.Conversation {
		answered = answered || (m.Role == "user" && m.Content == "Thursday")
		echoed = echoed || (m.Role == "assistant" && strings.Contains(m.Content, "Thursday"))
	}
	if !answered || !echoed {
		t.Fatalf("conversation lacks the answer or its echo: %+v", task.Conversation)
	}
	t.Logf("reference agent loop done in %s", time.Since(start).Round(time.Millisecond))
}

// TestPythonExampleAgent runs the README's Python agent (standard library only) against a
// real server through a question answered over REST.
func TestPythonExampleAgent(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required for this test; .ci/run installs it")
	}
	ap := newAgentProject(t, "py", "py-worker")
	srv, token, agent := ap.srv, ap.token, ap.agent
	// The script must also work from the secret alone: no SERVICE_API_TOKEN.
	agentEnv := append(append(os.Environ(), "POLL_SECONDS=0.1"), ap.env(t, "SERVICE_API_TOKEN")...)
	cmd := exec.Command(python, "backend/agentrun/example_agent.py")
	cmd.Env = agentEnv
	log := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("python agent output:\n%s", log.String())
		}
	}()
	_, raw := call(t, "POST", srv.url+"/api/tasks", token,
		fmt.Sprintf(`{"summary":"py","steps":[{"title":"one"},{"title":"Red or blue? [Red, Blue]"},{"title":"three"}],"agent_id":%d}`, agent.ID))
	var task struct {
		ID               int64
		Status           string
		WaitingDetails   *string  `json:"waiting_details"`
		WaitingOptions   []string `json:"waiting_options"`
		WaitingExpiresAt *string  `json:"waiting_expires_at"`
		Conversation     []struct{ Role, Content string }
	}
	json.Unmarshal(raw, &task)
	wait := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			_, raw := call(t, "GET", fmt.Sprintf("%s/api/tasks/%d", srv.url, task.ID), token, "")
			json.Unmarshal(raw, &task)
			if task.Status == want {
				return
			}
		}
		t.Fatalf("task never reached %s; it is %s", want, task.Status)
	}
	wait("Waiting")
	// The bracketed answers are the question's options; it has a deadline (a day).
	if *task.WaitingDetails != "Red or blue?" || strings.Join(task.WaitingOptions, ",") != "Red,Blue" || task.WaitingExpiresAt == nil {
		t.Fatalf("the question: %v %v %v", *task.WaitingDetails, task.WaitingOptions, task.WaitingExpiresAt)
	}
	if status, raw := call(t, "POST", fmt.Sprintf("%s/api/tasks/%d/respond", srv.url, task.ID), token, `{"choice":"Blue"}`); status != 200 {
		t.Fatalf("respond: %d %s", status, raw)
	}
	wait("Done")
	if last := task.Conversation[len(task.Conversation)-2]; last.Role != "assistant" || !strings.Contains(last.Content, "Blue") {
		t.Fatalf("conversation: %+v", task.Conversation)
	}
}

// TestServerNotesItsURL: a server on a new data directory says it created the database;
// while it runs, server.url (0600) holds its URL and agent env defaults to it; a clean
// stop removes the note.
func TestServerNotesItsURL(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data)
	if !strings.Contains(srv.stderr.String(), "created a new, empty database at "+filepath.Join(data, "agentdesk.db")) {
		t.Errorf("no new-database line in the server's log:\n%s", srv.stderr.String())
	}
	note := filepath.Join(data, "server.url")
	st, err := os.Stat(note)
	if err != nil {
		t.Fatalf("server.url while serving: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("server.url mode %o, want 600", st.Mode().Perm())
	}
	project := strings.TrimSpace(mustCLI(t, "project", "id", "--data", data))
	mustCLI(t, "agent", "create", "--project", project, "--name", "w", "--data", data)
	if env := mustCLI(t, "agent", "env", "--project", project, "--name", "w", "--data", data); !strings.Contains(env, "export AGENTDESK_URL="+srv.url+"\n") {
		t.Errorf("agent env beside the server (%s):\n%s", srv.url, env)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Errorf("server.url after a clean stop: %v, want it removed", err)
	}
}
