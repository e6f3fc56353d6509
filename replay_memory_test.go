package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	agentserver "github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// TestReplayMemory: 20 sockets replaying a 100k-event history (?since=0, about 70 MB)
// at once keep the server's peak RSS under 150 MiB: the replay is streamed page by
// page, and only a few replays run at a time. The server runs as a child process, so
// that its memory is its own.
func TestReplayMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test replays 2M events over 20 sockets (about 30 s); make test runs it")
	}
	const (
		events  = 100_000
		sockets = 20
		limit   = 150 << 20
	)
	data := t.TempDir()
	token, projectID, last := fillEvents(t, data, events)

	srv := startServer(t, data)
	pid := srv.cmd.Process.Pid
	t.Logf("server started: %s", memStatus(pid))
	url := strings.Replace(srv.url, "http://", "ws://", 1) + "/api/events?since=0"
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, sockets)
	for range sockets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- replayAll(url, token, last)
		}()
	}
	wg.Wait()
	close(errs)
	hwm := peakRSS(t, pid)
	t.Logf("after the replays: %s", memStatus(pid))
	t.Logf("%d sockets replayed %d events of project %s in %v; server peak RSS %d MiB", sockets, last, projectID, time.Since(start).Round(time.Millisecond), hwm>>20)
	if hwm >= limit {
		t.Errorf("server peak RSS %d MiB, want under %d MiB", hwm>>20, limit>>20)
	}
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// fillStore writes n rows straight into a new data directory's store, batch to a
// transaction, each row by row(tx, pid, j), and returns a task:read token of the
// project (named tokenName), the project's id and the store, which the caller closes
// before a server opens the directory.
func fillStore(t *testing.T, data, tokenName string, n, batch int, row func(tx *store.Tx, pid string, j int) error) (token, pid string, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, agentserver.DBPath(data), store.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, service.Options{})
	defer svc.Close()
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		t.Fatal(err)
	}
	projects, err := svc.Projects(ctx, auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	pid = projects[0].ID
	if token, _, err = svc.CreateToken(ctx, auth.Owner(pid), service.CreateTokenInput{Name: tokenName, Scopes: []string{auth.TaskRead}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += batch {
		if err := st.Write(ctx, store.Author{}, func(tx *store.Tx) error {
			for j := i; j < min(i+batch, n); j++ {
				if err := row(tx, pid, j); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return token, pid, st
}

// fillEvents writes n events of about 700 bytes straight into a new data directory's
// log, and returns a task:read token, the project and its last seq. The store is
// closed before it returns, for the server to open.
func fillEvents(t *testing.T, data string, n int) (string, string, int64) {
	t.Helper()
	body := strings.Repeat("replayed history ", 35)
	now := time.Now().UTC()
	token, pid, st := fillStore(t, data, "replay", n, 2000, func(tx *store.Tx, pid string, j int) error {
		ev := map[string]any{"id": j, "summary": fmt.Sprintf("task %d", j), "details": body, "status": "Doing"}
		return tx.AppendEvent(context.Background(), pid, "task.updated", ev, now)
	})
	_, last, err := st.Read().EventBounds(context.Background(), pid)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return token, pid, last
}

// replayAll reads the stream until the event of seq last.
func replayAll(url, token string, last int64) error {
	d := websocket.Dialer{HandshakeTimeout: 2 * time.Minute}
	conn, _, err := d.Dial(url, map[string][]string{"Authorization": {"Bearer " + token}})
	if err != nil {
		return err
	}
	defer conn.Close()
	// Only the start of each message is read: the seq. The test's own work stays small
	// beside the server's.
	prefix := []byte(`{"seq":`)
	head := make([]byte, 32)
	var seq int64
	for seq < last {
		conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		_, r, err := conn.NextReader()
		if err != nil {
			return fmt.Errorf("after seq %d: %w", seq, err)
		}
		n, _ := io.ReadFull(r, head)
		msg := head[:n]
		if !bytes.HasPrefix(msg, prefix) {
			return fmt.Errorf("not an event: %s", msg)
		}
		rest := msg[len(prefix):]
		end := bytes.IndexByte(rest, ',')
		if end < 0 {
			return fmt.Errorf("not an event: %s", msg)
		}
		next, err := strconv.ParseInt(string(rest[:end]), 10, 64)
		if err != nil || next <= seq {
			return fmt.Errorf("seq %s after %d", rest[:end], seq)
		}
		seq = next
		if _, err := io.Copy(io.Discard, r); err != nil {
			return fmt.Errorf("after seq %d: %w", seq, err)
		}
	}
	return nil
}

// peakRSS reads a process's peak resident set size (VmHWM) from /proc.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc on this system: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM: %q", line)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// memStatus is the memory lines of a process's /proc status, for the log.
func memStatus(pid int) string {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmHWM") || strings.HasPrefix(line, "VmRSS") || strings.HasPrefix(line, "Rss") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(out, ", ")
}
