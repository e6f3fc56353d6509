package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

type streamEvent struct {
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	ProjectID string          `json:"projectId"`
	At        time.Time       `json:"at"`
	Data      json.RawMessage `json:"data"`
}

func dial(t *testing.T, env *testenv.Env, query string, header http.Header) *websocket.Conn {
	t.Helper()
	url := strings.Replace(env.URL, "http://", "ws://", 1) + "/api/events" + query
	conn, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", query, err, status)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// next reads one event, failing after the timeout.
func next(t *testing.T, conn *websocket.Conn, timeout time.Duration) streamEvent {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(timeout))
	var e streamEvent
	if err := conn.ReadJSON(&e); err != nil {
		t.Fatalf("read event: %v", err)
	}
	return e
}

// nextIs reads the next event and requires its type and a piece of its data. Sent after
// the events under test, such a marker proves that nothing else came before it, where
// waiting a while for silence would prove nothing on a busy machine.
func nextIs(t *testing.T, conn *websocket.Conn, typ, contains string) {
	t.Helper()
	if e := next(t, conn, 5*time.Second); e.Type != typ || !strings.Contains(string(e.Data), contains) {
		t.Fatalf("got %s (seq %d) %s; want the marker %s with %q", e.Type, e.Seq, e.Data, typ, contains)
	}
}

func createTasks(t *testing.T, env *testenv.Env, token string, n, clients int, body string) {
	t.Helper()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += clients {
				if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: token, Body: fmt.Sprintf(body, i)}); r.Status != 201 {
					t.Errorf("create: %d %s", r.Status, r.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestEventsResumeWithSince: a client that reconnects with since misses nothing across
// 1,000 changes made while it was away, and gets each exactly once, in order.
func TestEventsResumeWithSince(t *testing.T) { pgtest.Engines(t, testEventsResumeWithSince) }

func testEventsResumeWithSince(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	conn := dial(t, env, "", bearer(tok))
	createTasks(t, env, tok, 1, 1, `{"summary":"first %d"}`)
	first := next(t, conn, 5*time.Second)
	if first.Type != "task.created" || first.ProjectID != env.Project.ID || !strings.Contains(string(first.Data), `"summary":"first 0"`) {
		t.Fatalf("first event: %+v %s", first, first.Data)
	}
	conn.Close()

	createTasks(t, env, tok, 1000, 8, `{"summary":"away %d"}`)

	conn = dial(t, env, fmt.Sprintf("?since=%d", first.Seq), bearer(tok))
	seen := map[string]bool{}
	for i := range 1000 {
		e := next(t, conn, 10*time.Second)
		if e.Seq != first.Seq+int64(i)+1 {
			t.Fatalf("event %d has seq %d, want %d", i, e.Seq, first.Seq+int64(i)+1)
		}
		var task struct{ Summary string }
		json.Unmarshal(e.Data, &task)
		if seen[task.Summary] {
			t.Fatalf("%q delivered twice", task.Summary)
		}
		seen[task.Summary] = true
	}
	// Then the live stream continues with no gap.
	createTasks(t, env, tok, 1, 1, `{"summary":"live %d"}`)
	if e := next(t, conn, 5*time.Second); e.Seq != first.Seq+1001 {
		t.Fatalf("live event after replay has seq %d", e.Seq)
	}
	createTasks(t, env, tok, 1, 1, `{"summary":"marker %d"}`)
	nextIs(t, conn, "task.created", `"summary":"marker 0"`) // and nothing in between
}

// TestEventsFiltering: callers get only the events their scopes and project allow.
func TestEventsFiltering(t *testing.T) { pgtest.Engines(t, testEventsFiltering) }

func testEventsFiltering(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	p := env.Project.ID
	writer := env.Token(t, p, "task:read", "task:write", "messaging:read", "messaging:write")
	env.Agent(t, p, "worker")
	taskReader := dial(t, env, "", bearer(env.Token(t, p, "task:read")))
	messaging := dial(t, env, "", bearer(env.Token(t, p, "messaging:read")))
	other := env.NewProject(t, "other")
	outsider := dial(t, env, "", bearer(env.Token(t, other.ID, "task:read", "messaging:read")))
	browser := dial(t, env, "?access_token="+env.Token(t, p, "task:read"), nil)
	agent := dial(t, env, "?project_id="+p, env.AgentHeaders(t, p, "worker"))

	createTasks(t, env, writer, 1, 1, `{"summary":"task %d"}`)
	if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/projects/" + p + "/conversations", Token: writer, Body: `{"message":"hello"}`}); r.Status != 201 {
		t.Fatalf("conversation: %d %s", r.Status, r.Body)
	}

	expect := func(name string, conn *websocket.Conn, types ...string) {
		for _, want := range types {
			if e := next(t, conn, 5*time.Second); e.Type != want {
				t.Fatalf("%s got %s, want %s", name, e.Type, want)
			}
		}
	}
	expect("task reader", taskReader, "task.created")
	expect("browser", browser, "task.created")
	expect("messaging-only token", messaging, "conversation.created", "message.created")
	expect("agent (task and messaging scopes)", agent, "task.created", "conversation.created", "message.created")

	// Markers, which each connection may see, prove that nothing else came first: no
	// conversation event without messaging:read, no task event without task:read, no
	// event of another project.
	createTasks(t, env, writer, 1, 1, `{"summary":"marker %d"}`)
	if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/projects/" + p + "/conversations", Token: writer, Body: `{"message":"marker"}`}); r.Status != 201 {
		t.Fatalf("conversation: %d %s", r.Status, r.Body)
	}
	createTasks(t, env, env.Token(t, other.ID, "task:write"), 1, 1, `{"summary":"other marker %d"}`)
	nextIs(t, taskReader, "task.created", `"summary":"marker 0"`)
	nextIs(t, browser, "task.created", `"summary":"marker 0"`)
	nextIs(t, messaging, "conversation.created", "")
	nextIs(t, messaging, "message.created", `"marker"`)
	nextIs(t, agent, "task.created", `"summary":"marker 0"`)
	nextIs(t, outsider, "task.created", `"summary":"other marker 0"`)
}

func TestEventsRefusals(t *testing.T) { pgtest.Engines(t, testEventsRefusals) }

func testEventsRefusals(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	url := strings.Replace(env.URL, "http://", "ws://", 1) + "/api/events"
	cases := []struct {
		name   string
		query  string
		header http.Header
		status int
	}{
		{"no credentials", "", nil, 401},
		{"wrong token", "", bearer("adk_0000000000000000000000000000000000000000"), 401},
		{"wrong query token", "?access_token=nope", nil, 401},
		{"data token", "", bearer(env.TypedToken(t, env.Project.ID, "data", "vector:read")), 403},
		{"bad since", "?since=abc", bearer(env.Token(t, env.Project.ID, "task:read")), 400},
		{"foreign browser origin", "", http.Header{"Authorization": {"Bearer " + env.Token(t, env.Project.ID, "task:read")}, "Origin": {"https://evil.example"}}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, resp, err := websocket.DefaultDialer.Dial(url+c.query, c.header)
			if err == nil || resp == nil || resp.StatusCode != c.status {
				t.Fatalf("dial: err %v, response %v; want status %d", err, resp, c.status)
			}
		})
	}
	// The server's own origin is a browser that may connect.
	h := bearer(env.Token(t, env.Project.ID, "task:read"))
	h.Set("Origin", env.URL)
	dial(t, env, "", h)
	// A plain GET says it is a WebSocket endpoint.
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/events", Token: env.Token(t, env.Project.ID, "task:read")}); r.Status != 400 {
		t.Fatalf("plain GET: %d %s", r.Status, r.Body)
	}
}

// TestEventsSlowClientDropped: a client that stops reading is disconnected with a
// close reason, while the others get every event without waiting for it.
func TestEventsSlowClientDropped(t *testing.T) { pgtest.Engines(t, testEventsSlowClientDropped) }

func testEventsSlowClientDropped(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	slow := dial(t, env, "", bearer(tok))
	fast := dial(t, env, "", bearer(tok))

	const n = 2500
	details := strings.Repeat("x", 20_000) // ~50 MB of events in all: more than socket buffers hold
	received := make(chan int, 1)
	go func() {
		count := 0
		fast.SetReadDeadline(time.Now().Add(60 * time.Second))
		for count < n {
			if _, _, err := fast.ReadMessage(); err != nil {
				break
			}
			count++
		}
		received <- count
	}()
	createTasks(t, env, tok, n, 8, `{"summary":"big %d","details":"`+details+`"}`)
	if got := <-received; got != n {
		t.Fatalf("the reading client got %d of %d events", got, n)
	}

	// The slow client, reading at last, finds the stream closed for being too slow.
	slow.SetReadDeadline(time.Now().Add(30 * time.Second))
	count := 0
	var err error
	for {
		if _, _, err = slow.ReadMessage(); err != nil {
			break
		}
		count++
	}
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4008 || !strings.Contains(ce.Text, "since=") {
		t.Fatalf("slow client ended with %v after %d events; want close 4008 with a since= hint", err, count)
	}
	if count >= n {
		t.Fatalf("slow client was not dropped: it got all %d events", count)
	}
}

// TestEventsReset: a since older than the kept log gets a stream.reset to reload.
func TestEventsReset(t *testing.T) { pgtest.Engines(t, testEventsReset) }

func testEventsReset(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	createTasks(t, env, tok, 3, 1, `{"summary":"t %d"}`)
	// Drop the oldest events as retention would.
	if err := env.Service.PruneEventsBefore(context.Background(), auth.Owner(env.Project.ID), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	createTasks(t, env, tok, 1, 1, `{"summary":"after %d"}`)
	conn := dial(t, env, "?since=1", bearer(tok))
	e := next(t, conn, 5*time.Second)
	if e.Type != "stream.reset" || !strings.Contains(string(e.Data), "reload") {
		t.Fatalf("want stream.reset, got %+v %s", e, e.Data)
	}
	// A since in the future (a restored database) resets too.
	conn = dial(t, env, "?since=999999", bearer(tok))
	if e := next(t, conn, 5*time.Second); e.Type != "stream.reset" {
		t.Fatalf("future since: got %s", e.Type)
	}
}

// TestWebSocketOrigins: a browser page may open the WebSockets (/api/events and
// /graphql's) only from the server's own origin: the loopback address it serves on
// (localhost naming it too), never a page on another port of this machine. A DNS
// rebinding page sends an Origin that matches the Host it asked for, and must still be
// refused.
func TestWebSocketOrigins(t *testing.T) { pgtest.Engines(t, testWebSocketOrigins) }

func testWebSocketOrigins(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	token := env.Token(t, env.Project.ID, "task:read")
	_, port, _ := strings.Cut(strings.TrimPrefix(env.URL, "http://"), ":")
	otherPort := "3000"
	if port == otherPort {
		otherPort = "3001"
	}
	cases := []struct {
		origin, host string
		ok           bool
	}{
		{"", "", true}, // not a browser
		{env.URL, "", true},
		{"http://localhost:" + port, "localhost:" + port, true},
		{"http://127.0.0.1:" + otherPort, "", false}, // a page on another loopback port
		{"http://localhost:" + otherPort, "", false},
		{"http://127.0.0.9:" + port, "", false}, // another loopback address: another server may hold it
		{"http://[::1]:" + port, "", false},
		{"https://127.0.0.1:" + port, "", false},
		{"http://rebind.example:" + port, "rebind.example:" + port, false},
		{"https://evil.example", "", false},
		{"null", "", false},
	}
	for _, path := range []string{"/api/events", "/graphql"} {
		for _, c := range cases {
			h := bearer(token)
			if c.origin != "" {
				h.Set("Origin", c.origin)
			}
			if c.host != "" {
				h.Set("Host", c.host)
			}
			d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
			conn, resp, err := d.Dial(strings.Replace(env.URL, "http://", "ws://", 1)+path, h)
			if conn != nil {
				conn.Close()
			}
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			if c.ok && err != nil {
				t.Errorf("%s from %q (Host %q): refused: %v (status %d)", path, c.origin, c.host, err, status)
			}
			if !c.ok && status != http.StatusForbidden {
				t.Errorf("%s from %q (Host %q): status %d, want 403", path, c.origin, c.host, status)
			}
		}
	}
}
