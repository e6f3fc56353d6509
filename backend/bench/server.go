package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentdesk/agentdesk/backend/events"
)

// server is the agentdesk binary under test, run as a child process.
type server struct {
	bin, dir string // dir is the temporary data directory; the log is dir/server.log
	addr     string
	cmd      *exec.Cmd
	exited   chan struct{} // closed once the process has exited and been reaped
	waitErr  error         // the result of cmd.Wait, valid once exited is closed
	logFile  *os.File
	poll     time.Duration // how often start polls /healthz (50 ms when 0)
	args     []string      // more arguments of --serve, e.g. --activity-retention
	// floorToken set: bin is this bench's own binary, run as the floor server (floor.go)
	// with this token, instead of agentdesk.
	floorToken string
	// db is the server's and the command line's --db, given as AGENTDESK_DB (so that a
	// password in it does not show in the process list); "" is SQLite in dir.
	db string
}

// env is the environment of the binary's processes.
func (s *server) env() []string {
	if s.floorToken != "" {
		return append(os.Environ(), floorTokenEnv+"="+s.floorToken)
	}
	if s.db == "" {
		return nil // the bench's own
	}
	return append(os.Environ(), "AGENTDESK_DB="+s.db)
}

// cli runs one command of the binary on the data directory, as
// `agentdesk --data DIR args...`, and returns its standard output.
func (s *server) cli(args ...string) ([]byte, error) {
	cmd := exec.Command(s.bin, append([]string{"--data", s.dir}, args...)...)
	cmd.Env = s.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("agentdesk %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// project is a project made for the benchmark: its token holds the task and messaging
// scopes, and it has one agent (worker) that creates assign tasks to.
type project struct {
	id, token string
	agent     int64
	agentAuth http.Header // the worker's agent headers
}

// newProject creates a project, a token and an agent with the command line.
func (s *server) newProject(name string) (project, error) {
	out, err := s.cli("project", "create", "--name", name)
	if err != nil {
		return project{}, err
	}
	var p struct {
		ID        string `json:"id"`
		Namespace string `json:"namespace"`
		Secret    string `json:"token_secret"`
	}
	if err := json.Unmarshal(out, &p); err != nil || p.ID == "" || p.Secret == "" {
		return project{}, fmt.Errorf("project create printed %q, want a JSON object with an id", out)
	}
	tok, err := s.cli("token", "create", "--project", p.ID, "--name", "bench", "--scopes", "task:read,task:write,messaging:read,messaging:write")
	if err != nil {
		return project{}, err
	}
	token := strings.TrimSpace(string(tok))
	if token == "" || strings.ContainsAny(token, " \n") {
		return project{}, fmt.Errorf("token create printed %q, want the token alone", tok)
	}
	out, err = s.cli("agent", "create", "--project", p.ID, "--name", "worker")
	if err != nil {
		return project{}, err
	}
	var a struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(out, &a); err != nil || a.ID == 0 {
		return project{}, fmt.Errorf("agent create printed %q, want a JSON object with an id", out)
	}
	digest := sha1.Sum([]byte(p.ID + p.Secret))
	agentAuth := http.Header{}
	agentAuth.Set("X-Task-Authorization", hex.EncodeToString(digest[:]))
	agentAuth.Set("X-Task-Namespace", p.Namespace)
	agentAuth.Set("X-Agent-Name", "worker")
	return project{id: p.ID, token: token, agent: a.ID, agentAuth: agentAuth}, nil
}

// streamTokens makes enough task:read tokens of p for n event stream subscribers: one
// credential holds at most events.MaxSocketsPerCredential sockets, so subscriber i
// follows with token i / MaxSocketsPerCredential.
func (s *server) streamTokens(p project, n int) ([]string, error) {
	var tokens []string
	for range (n + events.MaxSocketsPerCredential - 1) / events.MaxSocketsPerCredential {
		tok, err := s.cli("token", "create", "--project", p.id, "--name", "bench streams", "--scopes", "task:read")
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, strings.TrimSpace(string(tok)))
	}
	return tokens, nil
}

// freePort asks the kernel for a loopback port that is free right now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs `agentdesk --serve` on a free loopback port, its log going to
// dir/server.log, and waits until GET /healthz answers 200 (at most 30 s).
// A port taken between picking and binding is retried, three times in all.
func (s *server) start(ctx context.Context, synchronous string) error {
	var lastErr error
	for range 3 {
		addr, err := freePort()
		if err != nil {
			return err
		}
		if lastErr = s.startOn(ctx, addr, synchronous); lastErr == nil {
			return nil
		}
		if s.cmd != nil && s.cmd.ProcessState == nil && s.cmd.Process != nil {
			s.kill()
		}
	}
	return lastErr
}

func (s *server) startOn(ctx context.Context, addr, synchronous string) error {
	logFile, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.logFile = logFile
	s.addr = addr
	args := append([]string{"--serve", "--addr", addr, "--data", s.dir, "--synchronous", synchronous}, s.args...)
	if s.floorToken != "" {
		args = []string{"-floor-serve", addr, "-floor-data", s.dir, "-synchronous", synchronous}
	}
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.Env = s.env()
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()

	probe := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("server exited while starting (%v); its log ends:\n%s", s.waitErr, s.logTail(2000))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cmp.Or(s.poll, 50*time.Millisecond)):
		}
		resp, err := probe.Get(s.url() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("GET /healthz did not answer 200 within 30 s; the server log ends:\n%s", s.logTail(2000))
}

func (s *server) url() string { return "http://" + s.addr }

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop sends SIGTERM and waits (at most 30 s) for the process to exit; it reports the
// exit code, and an error unless the server exited 0.
func (s *server) stop() (int, error) {
	if s.cmd == nil || s.cmd.Process == nil {
		return -1, errors.New("server was not started")
	}
	defer s.logFile.Close()
	select {
	case <-s.exited:
		return s.exitCode(), fmt.Errorf("server had already exited (%v); its log ends:\n%s", s.waitErr, s.logTail(2000))
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.kill()
		return -1, errors.New("server did not exit within 30 s of SIGTERM; killed it")
	}
	if code := s.exitCode(); code != 0 {
		return code, fmt.Errorf("server exited with %v after SIGTERM; its log ends:\n%s", s.waitErr, s.logTail(2000))
	}
	return 0, nil
}

func (s *server) exitCode() int {
	if s.cmd.ProcessState == nil {
		return -1
	}
	return s.cmd.ProcessState.ExitCode()
}

// kill ends the child at once (used only when it will not stop or failed to start).
func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
}

// logTail is the end of the server log, for error messages.
func (s *server) logTail(n int64) string {
	f, err := os.Open(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	_, _ = f.ReadAt(buf, off)
	return string(buf)
}

// cpu is the server's user+system CPU time so far, from /proc/PID/stat (fields 14
// and 15, in clock ticks of 1/100 s).
func (s *server) cpu() time.Duration {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.pid()), "stat"))
	if err != nil {
		return 0
	}
	_, cpu, _ := parsePidStat(raw)
	return cpu
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on Linux.
const clockTicks = 100

// memory reads VmRSS (resident now) and VmHWM (the peak) from /proc/PID/status, in MiB.
func (s *server) memory() (rss, hwm float64, err error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.pid()), "status"))
	if err != nil {
		return 0, 0, err
	}
	var found int
	for line := range strings.Lines(string(raw)) {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc status %s: %q", name, value)
		}
		if name == "VmRSS" {
			rss = kb / 1024
		} else {
			hwm = kb / 1024
		}
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("no VmRSS/VmHWM in /proc/PID/status")
	}
	return rss, hwm, nil
}

// selfCPU is this process's own user+system CPU time (every thread), from getrusage.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// raiseFileLimit lets this process (and the server it starts) hold a thousand sockets.
func raiseFileLimit() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}
