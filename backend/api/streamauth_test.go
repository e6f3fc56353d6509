package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// streamClient is a live WebSocket of either kind: the event stream or a GraphQL
// subscription to taskChanged over graphql-transport-ws.
type streamClient struct {
	conn    *websocket.Conn
	graphql bool
}

func openStream(t *testing.T, env *testenv.Env, graphql bool, query string, header http.Header) *streamClient {
	t.Helper()
	if !graphql {
		return &streamClient{conn: dial(t, env, query, header)}
	}
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	conn, _, err := d.Dial(strings.Replace(env.URL, "http://", "ws://", 1)+"/graphql", nil)
	if err != nil {
		t.Fatalf("dial /graphql: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	send := func(m map[string]any) {
		if err := conn.WriteJSON(m); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": header.Get("Authorization")}})
	c := &streamClient{conn: conn, graphql: true}
	if typ, _ := c.read(t); typ != "connection_ack" {
		t.Fatalf("want connection_ack, got %s", typ)
	}
	send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { taskChanged { seq kind } }"}})
	// A ping's pong comes after the subscription is registered.
	send(map[string]any{"type": "ping"})
	if typ, _ := c.read(t); typ != "pong" {
		t.Fatalf("want pong, got %s", typ)
	}
	return c
}

// read returns the next message's type (the event's, or the protocol message's) and
// the close error when the socket closed instead.
func (c *streamClient) read(t *testing.T) (string, *websocket.CloseError) {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, raw, err := c.conn.ReadMessage()
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return "", ce
	}
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m struct{ Type string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return m.Type, nil
}

// expectTask reads the change a task creation makes.
func (c *streamClient) expectTask(t *testing.T) {
	t.Helper()
	want := "task.created"
	if c.graphql {
		want = "next"
	}
	if typ, ce := c.read(t); typ != want {
		t.Fatalf("want %s, got %q (close %v)", want, typ, ce)
	}
}

// TestStreamsEndWithTheirCredential: a revoked, rotated or expired token, a deleted agent
// and a rotated project secret close the event stream and GraphQL subscriptions with
// 4401 and a reason, and nothing written after the end reaches them (but the events of
// the ending write itself: agent.deleted, project.secret_rotated). The hub checks an
// agent's credential after a commit only when the count of credential changes moved
// (store migration 00037): without its triggers, the task created after the end reaches
// the agent's stream unless the periodic check (every 250 ms) came between.
func TestStreamsEndWithTheirCredential(t *testing.T) {
	pgtest.Engines(t, testStreamsEndWithTheirCredential)
}

func testStreamsEndWithTheirCredential(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	pid := env.Project.ID
	owner := auth.Owner(pid)
	writer := env.Token(t, pid, "task:read", "task:write", "admin")
	newToken := func(expires *time.Time) (string, int64) {
		v, tok, err := env.Service.CreateToken(ctx, owner, service.CreateTokenInput{Name: "streamer", Scopes: []string{"task:read"}, ExpiresAt: expires})
		if err != nil {
			t.Fatal(err)
		}
		return v, tok.ID
	}
	createTask := func() {
		t.Helper()
		if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: writer, Body: `{"summary":"x"}`}); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	type ending struct {
		name   string
		open   func(graphql bool) *streamClient
		end    func()
		reason string
	}
	var endings []ending
	for _, graphql := range []bool{false, true} {
		var value string
		var id int64
		endings = append(endings,
			ending{name: "revoked", reason: "revoked", open: func(g bool) *streamClient {
				value, id = newToken(nil)
				return openStream(t, env, g, "", bearer(value))
			}, end: func() {
				if err := env.Service.RevokeToken(ctx, owner, id); err != nil {
					t.Fatal(err)
				}
			}},
			ending{name: "rotated", reason: "revoked", open: func(g bool) *streamClient {
				value, id = newToken(nil)
				return openStream(t, env, g, "", bearer(value))
			}, end: func() {
				if _, _, err := env.Service.RotateToken(ctx, owner, id); err != nil {
					t.Fatal(err)
				}
			}},
			ending{name: "expired", reason: "expired", open: func(g bool) *streamClient {
				at := time.Now().Add(1500 * time.Millisecond)
				value, id = newToken(&at)
				return openStream(t, env, g, "", bearer(value))
			}, end: func() {}}, // nothing but time
		)
		if !graphql { // agents use the event stream; GraphQL takes tokens
			endings = append(endings, ending{name: "agent deleted", reason: "not an agent", open: func(g bool) *streamClient {
				env.Agent(t, pid, "doomed")
				return openStream(t, env, g, "?project_id="+pid, env.AgentHeaders(t, pid, "doomed"))
			}, end: func() {
				agents, err := env.Service.Agents(ctx, owner)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range agents {
					if a.Name == "doomed" {
						if err := env.Service.DeleteAgent(ctx, owner, a.ID); err != nil {
							t.Fatal(err)
						}
					}
				}
			}}, ending{name: "secret rotated", reason: "X-Task-Authorization is wrong", open: func(g bool) *streamClient {
				env.Agent(t, pid, "rotated-out")
				return openStream(t, env, g, "?project_id="+pid, env.AgentHeaders(t, pid, "rotated-out"))
			}, end: func() {
				if _, err := env.Service.RotateProjectSecret(ctx, owner); err != nil {
					t.Fatal(err)
				}
			}})
		}
		for _, e := range endings {
			kind := "events"
			if graphql {
				kind = "graphql"
			}
			t.Run(kind+"/"+e.name, func(t *testing.T) {
				c := e.open(graphql)
				createTask()
				c.expectTask(t) // live
				e.end()
				if e.name != "expired" {
					createTask() // must not reach the ended stream
				}
				for {
					typ, ce := c.read(t)
					if ce != nil {
						if ce.Code != 4401 || !strings.Contains(ce.Text, e.reason) {
							t.Fatalf("closed with %d %q; want 4401 with a reason saying %q", ce.Code, ce.Text, e.reason)
						}
						return
					}
					if typ != "ka" && typ != service.EventProjectSecretRotated && !strings.HasPrefix(typ, "agent.") && !strings.HasPrefix(typ, "participant.") {
						t.Fatalf("got %s after the credential ended", typ)
					}
				}
			})
		}
		endings = nil
	}
}
