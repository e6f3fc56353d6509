package api_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestSocketsPerCredential: one credential holds at most 64 open sockets, event streams
// and GraphQL WebSockets together. The 65th is refused before the upgrade with 429
// rate_limited and Retry-After (or, when its credential comes in GraphQL's
// connection_init, closed with 1013 and a reason); another credential is not held back;
// and once one of the 64 closes, the credential may open another.
func TestSocketsPerCredential(t *testing.T) { pgtest.Engines(t, testSocketsPerCredential) }

func testSocketsPerCredential(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	token := env.Token(t, env.Project.ID, auth.TaskRead)
	ws := strings.Replace(env.URL, "http://", "ws://", 1)
	gqlDialer := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	open := func(path string, header http.Header) (*websocket.Conn, *http.Response, error) {
		d := websocket.DefaultDialer
		if path == "/graphql" {
			d = &gqlDialer
		}
		conn, resp, err := d.Dial(ws+path, header)
		if conn != nil {
			t.Cleanup(func() { conn.Close() })
		}
		return conn, resp, err
	}

	var streams []*websocket.Conn
	for i := range events.MaxSocketsPerCredential {
		path := "/api/events"
		if i%2 == 1 {
			path = "/graphql" // counted from the upgrade: the token is in its header
		}
		conn, resp, err := open(path, bearer(token))
		if err != nil {
			t.Fatalf("socket %d (%s): %v %v", i+1, path, err, resp)
		}
		if path == "/api/events" {
			streams = append(streams, conn)
		}
	}

	refused := func(path string) {
		t.Helper()
		conn, resp, err := open(path, bearer(token))
		if conn != nil || err == nil || resp == nil {
			t.Fatalf("socket %d on %s: opened", events.MaxSocketsPerCredential+1, path)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
			!strings.Contains(string(body), "rate_limited") || !strings.Contains(string(body), "64") {
			t.Fatalf("socket %d on %s: %d (Retry-After %q) %s, want 429 rate_limited saying 64",
				events.MaxSocketsPerCredential+1, path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	refused("/api/events")
	refused("/graphql")

	// The credential in connection_init: known only after the upgrade.
	conn, _, err := open("/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}}); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound for a broken test
	_, msg, err := conn.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 1013 || !strings.Contains(ce.Text, "64") {
		t.Fatalf("socket %d by connection_init: %s %v, want a close 1013 saying 64", events.MaxSocketsPerCredential+1, msg, err)
	}

	// Another token is not held back.
	if _, resp, err := open("/api/events", bearer(env.Token(t, env.Project.ID, auth.TaskRead))); err != nil {
		t.Fatalf("another token's stream: %v %v", err, resp)
	}

	// One closes: the count drops, as soon as the server has seen it go.
	streams[0].Close()
	deadline := time.Now().Add(10 * time.Second) // a bound for a broken test, not a timing assertion
	for {
		conn, resp, err := websocket.DefaultDialer.Dial(ws+"/api/events", bearer(token))
		if err == nil {
			conn.Close()
			break
		}
		if resp == nil || resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after one of its sockets closed, the credential's next: %v %v", err, resp)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
