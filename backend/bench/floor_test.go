package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
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

// TestFloorEvents: the floor's event stream sends every subscriber each create's event,
// in order, as agentdesk's stream does (what the fan-out phase reads of it: fanoutKey,
// eventAt); a wrong token gets no stream.
func TestFloorEvents(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- runFloor(ctx, ln, t.TempDir(), "full", "secret") }()
	base := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	dial := func(token string) (*websocket.Conn, *http.Response, error) {
		return websocket.DefaultDialer.Dial("ws://"+base+"/api/events", http.Header{"Authorization": {"Bearer " + token}})
	}
	if _, resp, err := dial("wrong"); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %v %v, want a 401", resp, err)
	}
	subs := make([]*websocket.Conn, 3)
	for i := range subs {
		c, _, err := dial("secret")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		subs[i] = c
	}
	time.Sleep(100 * time.Millisecond) // every subscriber is registered
	for i := range 2 {
		req, _ := http.NewRequest("POST", "http://"+base+"/api/tasks", strings.NewReader(fmt.Sprintf(`{"summary":"fan-out %d"}`, i)))
		req.Header.Set("Authorization", "Bearer secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: %d", resp.StatusCode)
		}
	}
	for s, c := range subs {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for i := range 2 {
			_, raw, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("subscriber %d, event %d: %v", s, i, err)
			}
			var e struct {
				Seq  int64                    `json:"seq"`
				Type string                   `json:"type"`
				Data struct{ Summary string } `json:"data"` // the task
			}
			key, keyed := fanoutKey(raw)
			_, timed := eventAt(raw)
			if err := json.Unmarshal(raw, &e); err != nil || e.Seq != int64(i+1) || e.Type != "task.created" ||
				e.Data.Summary != fmt.Sprintf("fan-out %d", i) || !keyed || key != i || !timed {
				t.Errorf("subscriber %d, event %d: %s (%v)", s, i, raw, err)
			}
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
