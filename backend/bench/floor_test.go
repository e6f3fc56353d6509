package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFloorServer: the floor answers creates as agentdesk does (201 and the task), writes
// each task and its event, and refuses a wrong token and a bad body.
func TestFloorServer(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- runFloor(ctx, ln, dir, "full", "secret") }()
	url := "http://" + ln.Addr().String() + "/api/tasks"
	post := func(token, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}

	var seq atomic.Int64
	body := createBody(&seq, floorAgent)
	var wg sync.WaitGroup
	ids := make(chan float64, 40)
	for range 40 { // at once, so that the writer commits batches of several
		wg.Go(func() {
			status, task := post("secret", string(body()))
			if status != http.StatusCreated || task["summary"] == nil || len(task["steps"].([]any)) != 3 {
				t.Errorf("create: %d %v", status, task)
				return
			}
			ids <- task["id"].(float64)
		})
	}
	wg.Wait()
	close(ids)
	seen := map[float64]bool{}
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != 40 {
		t.Errorf("%d distinct ids, want 40", len(seen))
	}
	if status, _ := post("wrong", string(body())); status != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d, want 401", status)
	}
	for _, bad := range []string{`{"summary":""}`, `{"summary":"x","steps":[{"title":" "}]}`, `{"summary":"x","agent_id":99}`, `{"summary":"x","nope":1}`, `[`} {
		if status, _ := post("secret", bad); status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, status)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, "floor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tasks, events, lastSeq int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM events), (SELECT max(seq) FROM events)`).Scan(&tasks, &events, &lastSeq); err != nil {
		t.Fatal(err)
	}
	if tasks != 40 || events != 40 || lastSeq != 40 {
		t.Errorf("the database holds %d tasks and %d events up to seq %d, want 40, 40, 40", tasks, events, lastSeq)
	}
}
