package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// TestStreamedListMemory: the whole list of 100,000 tasks (GET /api/tasks without limit,
// about 70 MB of JSON) raises the server's RSS by less than 20 MB: it is streamed row by
// row, never built in memory. The server runs as a child process, so that its memory is
// its own.
func TestStreamedListMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test lists 100k tasks (about 10 s); make test runs it")
	}
	const (
		tasks = 100_000
		limit = 20 << 20
	)
	data := t.TempDir()
	token := fillTasks(t, data, tasks)

	srv := startServer(t, data)
	pid := srv.cmd.Process.Pid
	t.Logf("server started: %s", memStatus(pid))
	// The baseline is a server that has worked a little: the server's GC pacer
	// (backend/server/gc.go) lets the heap grow by 16 MiB of garbage between collections,
	// so any load at all, the smallest requests included, takes a fresh server's RSS up
	// by about that much. A few thousand single-task reads (nothing they read is kept)
	// reach that level first; the list must then add less than limit.
	for id := 1; id <= 3000; id++ {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/tasks/%d", srv.url, id), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("get task %d: %d", id, resp.StatusCode)
		}
	}
	before := max(rss(t, pid), peakRSS(t, pid))
	t.Logf("after 3000 single reads: %s", memStatus(pid))

	start := time.Now()
	req, _ := http.NewRequest("GET", srv.url+"/api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("list: %d %v", resp.StatusCode, err)
	}
	took := time.Since(start)
	hwm := peakRSS(t, pid)
	t.Logf("after the list: %s", memStatus(pid))
	t.Logf("listed %d tasks, %d MB in %v (%.0f MB/s); RSS %d MiB before, peak %d MiB after",
		tasks, n>>20, took.Round(time.Millisecond), float64(n)/1e6/took.Seconds(), before>>20, hwm>>20)
	if n < tasks*300 {
		t.Fatalf("the list is %d bytes, too short for %d tasks", n, tasks)
	}
	if grew := hwm - before; grew >= limit {
		t.Errorf("the server's RSS grew by %d MiB during one list, want under %d MiB", grew>>20, limit>>20)
	}
}

// fillTasks writes n tasks with two steps each straight into a new data directory's
// store, in large transactions, and returns a task:read token of the project. The store
// is closed before it returns, for the server to open.
func fillTasks(t *testing.T, data string, n int) string {
	t.Helper()
	details := strings.Repeat("some details of the task ", 12)
	now := time.Now().UTC()
	token, _, st := fillStore(t, data, "list", n, 5000, func(tx *store.Tx, pid string, j int) error {
		return tx.InsertTask(context.Background(), &model.Task{ProjectID: pid, Summary: fmt.Sprintf("task %d", j), Details: details,
			Status: model.StatusDone, Source: model.SourceUser, TaskType: model.DefaultTaskType,
			Steps:     []model.Step{{Title: "first", Status: model.StepCompleted}, {Title: "second", Status: model.StepCompleted}},
			CreatedAt: now, UpdatedAt: now})
	})
	// The search index takes in these tasks now, as a server does in its first seconds
	// on such a store, so that the list is measured alone rather than beside that
	// catch-up's garbage.
	ctx := context.Background()
	for more := true; more; {
		if err := st.Write(ctx, store.Author{}, func(tx *store.Tx) (err error) {
			more, err = tx.IndexTaskSearch(ctx, 5000)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	return token
}

// rss reads a process's resident set size (VmRSS) from /proc.
func rss(t *testing.T, pid int) int64 { return procStatusKB(t, pid, "VmRSS:") }

// procStatusKB reads one "Name: N kB" line of a process's /proc status, in bytes.
func procStatusKB(t *testing.T, pid int, name string) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc on this system: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s %q", name, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc status", name)
	return 0
}
