package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/agentdesk/agentdesk/backend/store"
)

// TestFailedFsyncStopsTheWriter: once an fsync fails, the write it was for is told its
// outcome is unknown (503, not a plain failure that invites a duplicating retry), its
// event is not published, every later write is refused with 503 although the next
// fsyncs would succeed, /healthz answers 503, and reads go on.
func TestFailedFsyncStopsTheWriter(t *testing.T) {
	srv := serve(t, t.TempDir())
	pid, ctx := srv.project, context.Background()
	if status, body := srv.call(t, "POST", "/api/tasks", `{"summary":"before"}`); status != http.StatusCreated {
		t.Fatalf("before the failure: %d %s", status, body)
	}
	_, lastBefore, err := srv.Service.Store().Read().EventBounds(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}

	store.FailNextSync(srv.Service.Store(), syscall.EIO, "task.created")
	status, body := srv.call(t, "POST", "/api/tasks", `{"summary":"unknown"}`)
	var e struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal([]byte(body), &e)
	if status != http.StatusServiceUnavailable || e.Error.Code != "internal" || !strings.Contains(e.Error.Message, "may or may not be stored") {
		t.Fatalf("the write whose fsync failed: %d %s, want 503, code internal, saying it may or may not be stored", status, body)
	}
	for range 2 { // the fsyncs would succeed now: still refused
		status, body = srv.call(t, "POST", "/api/tasks", `{"summary":"after"}`)
		json.Unmarshal([]byte(body), &e)
		if status != http.StatusServiceUnavailable || e.Error.Code != "internal" || !strings.Contains(e.Error.Message, "stopped accepting writes") {
			t.Fatalf("a write after the failure: %d %s, want 503 saying the server stopped accepting writes", status, body)
		}
	}
	if err := srv.Service.Store().Write(ctx, store.Author{}, func(*store.Tx) error { return nil }); !errors.Is(err, srv.Service.Store().Stopped()) || err == nil {
		t.Fatalf("store write after the failure: %v", err)
	}
	resp, err := http.Get(srv.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/healthz: %d, want 503", resp.StatusCode)
	}
	if status, body := srv.call(t, "GET", "/api/tasks", ""); status != http.StatusOK {
		t.Fatalf("a read after the failure: %d %s", status, body)
	}
	evs, err := srv.Service.Store().Read().EventsSince(ctx, pid, lastBefore, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 {
		t.Fatalf("events of unknown durability were published: %+v", evs)
	}
}
