package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
)

// lockedBuffer collects the log of the server under test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const diskFullChild = "AGENTDESK_DISKFULL_CHILD"

// TestDiskFull: the database's disk fills up while 8 clients create tasks. Writes then
// get 507 with code insufficient_storage and a sentence saying the disk is full and
// nothing was saved; reads go on; /healthz says degraded; the log says so once. Once
// space is freed, writes succeed again by themselves, with nothing acknowledged lost and
// integrity_check ok.
//
// The disk is a 16 MB tmpfs, mounted in a private mount namespace: the test runs itself
// again under unshare -m, as root (CI runs as root).
func TestDiskFull(t *testing.T) {
	if os.Getenv(diskFullChild) == "" {
		if os.Geteuid() != 0 {
			t.Skip("TestDiskFull needs root: it mounts a 16 MB tmpfs in a private mount namespace (unshare -m); CI runs it as root")
		}
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Fatal("TestDiskFull needs unshare (util-linux) to mount a tmpfs in a private mount namespace: apt-get install util-linux")
		}
		cmd := exec.Command("unshare", "-m", "--propagation", "private", os.Args[0], "-test.run", "^TestDiskFull$", "-test.count", "1", "-test.v", "-test.timeout", "3m")
		cmd.Env = append(os.Environ(), diskFullChild+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("under unshare -m:\n%s", out)
		if err != nil {
			t.Fatalf("TestDiskFull under unshare -m: %v", err)
		}
		return
	}

	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=16m"); err != nil {
		t.Fatalf("mount a 16 MB tmpfs on %s: %v", mnt, err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	logs := &lockedBuffer{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))

	dir := filepath.Join(mnt, "data")
	srv := serve(t, dir)
	type answer struct {
		status int
		body   string
	}
	post := func(summary string) (answer, int64) {
		req, _ := http.NewRequest("POST", srv.URL()+"/api/tasks",
			strings.NewReader(fmt.Sprintf(`{"summary": %q, "details": %q}`, summary, strings.Repeat("x", 2000))))
		req.Header.Set("Authorization", "Bearer "+srv.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return answer{0, err.Error()}, 0
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var task struct{ ID int64 }
		json.Unmarshal(b, &task)
		return answer{resp.StatusCode, string(b)}, task.ID
	}

	// 8 clients write until stopped; every 201's task must survive.
	var (
		stop           atomic.Bool
		mu             sync.Mutex
		acked          []int64
		full, ok       atomic.Int64
		unexpected     []answer
		freed          atomic.Bool
		okAfterFreeing [8]atomic.Int64
		fullBody       atomic.Pointer[string]
	)
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				a, id := post(fmt.Sprintf("client %d task %d", c, i))
				switch a.status {
				case http.StatusCreated:
					ok.Add(1)
					if freed.Load() {
						okAfterFreeing[c].Add(1)
					}
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				case http.StatusInsufficientStorage:
					full.Add(1)
					fullBody.CompareAndSwap(nil, &a.body)
				default:
					mu.Lock()
					unexpected = append(unexpected, a)
					mu.Unlock()
					return
				}
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			bad := append([]answer(nil), unexpected...)
			mu.Unlock()
			if len(bad) > 0 {
				t.Fatalf("waiting for %s: unexpected answers %+v", what, bad)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 60 s (%d created, %d refused 507)\nlog:\n%s", what, ok.Load(), full.Load(), logs.String())
			}
		}
	}
	waitFor("writes", func() bool { return ok.Load() >= 100 })

	// Fill the disk.
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			break
		}
	}
	f.Close()
	waitFor("507 answers", func() bool { return full.Load() >= 50 })

	var e struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal([]byte(*fullBody.Load()), &e)
	if e.Error.Code != "insufficient_storage" || !strings.Contains(e.Error.Message, "disk") || !strings.Contains(e.Error.Message, "full") ||
		!strings.Contains(e.Error.Message, "not saved") {
		t.Errorf("a write on a full disk: %s, want code insufficient_storage and a sentence saying the disk is full and nothing was saved", *fullBody.Load())
	}
	if status, body := srv.call(t, "GET", "/api/tasks?limit=5", ""); status != http.StatusOK {
		t.Errorf("a read on a full disk: %d %s", status, body)
	}
	// The activity trail, which a read only reads, reads on a full disk.
	ctx := context.Background()
	if _, err := srv.Service.Activity(ctx, auth.Owner(srv.project), service.ActivityInput{Limit: 10}); err != nil {
		t.Errorf("reading the activity trail on a full disk: %v", err)
	}
	health := func() (int, string) {
		resp, err := http.Get(srv.URL() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h struct{ Status string }
		json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h.Status
	}
	if status, state := health(); status != http.StatusOK || state != "degraded" {
		t.Errorf("/healthz on a full disk: %d %q, want 200 degraded", status, state)
	}

	// Free the space: every client's writes go through again, by themselves.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed.Store(true)
	waitFor("writes from every client after freeing space", func() bool {
		for c := range okAfterFreeing {
			if okAfterFreeing[c].Load() < 20 {
				return false
			}
		}
		return true
	})
	stop.Store(true)
	wg.Wait()
	if status, state := health(); status != http.StatusOK || state != "ok" {
		t.Errorf("/healthz once space is back: %d %q, want 200 ok", status, state)
	}
	t.Logf("%d tasks created, %d writes refused with 507", ok.Load(), full.Load())

	// Every acknowledged task is there; the file is intact (read beside the server).
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "agentdesk.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	have := map[int64]bool{}
	rows, err := db.Query(`SELECT id FROM tasks`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		have[id] = true
	}
	rows.Close()
	lost := 0
	for _, id := range acked {
		if !have[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged tasks are lost", lost, len(acked))
	}

	// The log said it once, not per request.
	log := logs.String()
	if n := strings.Count(log, "the disk is full"); n != 1 {
		t.Errorf("the log says the disk is full %d times, want once:\n%s", n, log)
	}
	if lines := strings.Count(strings.TrimSpace(log), "\n") + 1; lines != 1 {
		t.Errorf("the log has %d lines at warning level or above, want the one:\n%s", lines, log)
	}
}
