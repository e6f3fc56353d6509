package graphql_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	agql "github.com/agentdesk/agentdesk/backend/graphql"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// wsClient speaks graphql-transport-ws by hand, to check the protocol message by message.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/graphql" }

// dialWS opens a socket with the subprotocol; header may carry Authorization or Origin.
func dialWS(t *testing.T, base string, header http.Header, protocols ...string) (*wsClient, *http.Response, error) {
	t.Helper()
	if protocols == nil {
		protocols = []string{agql.Subprotocol}
	}
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(wsURL(base), header)
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn}, resp, nil
}

// connect dials and completes connection_init with the token.
func connect(t *testing.T, env *testenv.Env, token string) *wsClient {
	t.Helper()
	c, _, err := dialWS(t, env.URL, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.send(wsMsg{Type: "connection_init", Payload: mustJSON(map[string]any{"Authorization": "Bearer " + token})})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("want connection_ack, got %+v", m)
	}
	return c
}

func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

func (c *wsClient) send(m wsMsg) {
	c.t.Helper()
	if err := c.conn.WriteJSON(m); err != nil {
		c.t.Fatalf("send %s: %v", m.Type, err)
	}
}

func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	c.send(wsMsg{ID: id, Type: "subscribe", Payload: mustJSON(map[string]any{"query": query, "variables": vars})})
}

// read returns the next message, failing the test after 10 s.
func (c *wsClient) read() wsMsg {
	c.t.Helper()
	m, err := c.tryRead(10 * time.Second)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

func (c *wsClient) tryRead(d time.Duration) (wsMsg, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	var m wsMsg
	_, raw, err := c.conn.ReadMessage()
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		c.t.Fatalf("not JSON: %s", raw)
	}
	return m, nil
}

// closed reads until the server closes, and returns the close code and reason.
func (c *wsClient) closed() (int, string) {
	c.t.Helper()
	for {
		_, err := c.tryRead(10 * time.Second)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text
		}
		if err != nil {
			c.t.Fatalf("want a close frame, got %v", err)
		}
	}
}

// sync makes a ping round trip: every message sent before it has been handled.
func (c *wsClient) sync() {
	c.t.Helper()
	c.send(wsMsg{Type: "ping", Payload: mustJSON(map[string]string{"n": "sync"})})
	for {
		m := c.read()
		if m.Type == "pong" {
			return
		}
		c.t.Fatalf("want pong, got %+v", m)
	}
}

type nextPayload struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []gqlErr                   `json:"errors"`
}

// next reads the next message, which must be a next of operation id.
func (c *wsClient) next(id string) nextPayload {
	c.t.Helper()
	m := c.read()
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("want next of %s, got %+v %s", id, m, m.Payload)
	}
	var p nextPayload
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		c.t.Fatalf("next payload: %v", err)
	}
	return p
}

type change struct {
	Seq    int64
	Kind   string
	TaskID *int64
	Task   *struct {
		ID     int64
		Status string
		Agent  *struct{ ID int64 }
		// Conversation stays null: the change's new entries come in Appended.
		Conversation []struct{ Content string }
	}
	Appended []struct{ Role, Content string }
	At       string
}

func (c *wsClient) change(id string) change {
	c.t.Helper()
	p := c.next(id)
	if len(p.Errors) > 0 {
		c.t.Fatalf("errors: %+v", p.Errors)
	}
	var ch change
	if err := json.Unmarshal(p.Data["taskChanged"], &ch); err != nil {
		c.t.Fatalf("taskChanged: %v", err)
	}
	return ch
}

const taskChangedQuery = `subscription($since: Int) { taskChanged(since: $since) { seq kind taskId at task { id status agent { id } conversation { content } } appended { role content } } }`

func TestSubscriptionTaskChanged(t *testing.T) { pgtest.Engines(t, testSubscriptionTaskChanged) }

func testSubscriptionTaskChanged(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	w := env.Token(t, pid, auth.TaskRead, auth.TaskWrite)
	other := env.NewProject(t, "Other")
	otherW := env.Token(t, other.ID, auth.TaskRead, auth.TaskWrite)

	c := connect(t, env, env.Token(t, pid, auth.TaskRead))
	c.subscribe("s1", taskChangedQuery, nil)
	c.sync()

	// Another project's change never arrives; ours do, in order.
	if r := env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/api/tasks", Token: otherW, Body: map[string]any{"summary": "theirs"}}); r.Status != 201 {
		t.Fatalf("create in other project: %d %s", r.Status, r.Body)
	}
	var task struct{ ID int64 }
	r := env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/api/tasks", Token: w, Body: map[string]any{"summary": "ours"}})
	r.JSON(t, &task)
	id := strconv.FormatInt(task.ID, 10)
	env.Do(t, testenv.Request{Method: http.MethodPut, Path: "/api/tasks/" + id + "/status", Token: w, Body: map[string]any{"status": "Doing"}})
	env.Do(t, testenv.Request{Method: http.MethodDelete, Path: "/api/tasks/" + id, Token: w})

	created := c.change("s1")
	if created.Kind != "created" || created.TaskID == nil || *created.TaskID != task.ID || created.Task == nil || created.Task.Status != "Backlog" || created.Seq == 0 {
		t.Fatalf("created = %+v", created)
	}
	updated := c.change("s1")
	if updated.Kind != "updated" || updated.Task == nil || updated.Task.Status != "Doing" || updated.Seq <= created.Seq {
		t.Fatalf("updated = %+v", updated)
	}
	deleted := c.change("s1")
	if deleted.Kind != "deleted" || deleted.Task != nil || deleted.TaskID == nil || *deleted.TaskID != task.ID {
		t.Fatalf("deleted = %+v", deleted)
	}

	// since replays what came after it, then follows live.
	c.subscribe("s2", taskChangedQuery, map[string]any{"since": created.Seq})
	if again := c.change("s2"); again.Seq != updated.Seq || again.Kind != "updated" {
		t.Fatalf("replay = %+v", again)
	}
	if again := c.change("s2"); again.Seq != deleted.Seq {
		t.Fatalf("replay = %+v", again)
	}

	// complete from the client stops an operation: no more next for it.
	c.send(wsMsg{ID: "s1", Type: "complete"})
	c.sync()
	env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/api/tasks", Token: w, Body: map[string]any{"summary": "after"}})
	after := c.change("s2")
	if after.Kind != "created" || after.Appended == nil || len(after.Appended) != 0 {
		t.Fatalf("s2 = %+v", after)
	}
	c.sync() // an s1 next would have come before the pong

	// A comment's change carries the comment alone, not the task's conversation.
	path := "/api/tasks/" + strconv.FormatInt(*after.TaskID, 10) + "/comments"
	for _, text := range []string{"first", "second"} {
		if r := env.Do(t, testenv.Request{Method: http.MethodPost, Path: path, Token: w, Body: map[string]any{"content": text}}); r.Status != http.StatusOK {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
	}
	for _, text := range []string{"first", "second"} {
		ch := c.change("s2")
		if ch.Kind != "updated" || len(ch.Appended) != 1 || ch.Appended[0].Content != text || ch.Appended[0].Role != "user" || ch.Task.Conversation != nil {
			t.Fatalf("comment %q: %+v", text, ch)
		}
	}

	// The same id may be used again once its operation is over.
	c.subscribe("s1", taskChangedQuery, nil)
	c.sync()
}

func TestSubscriptionMessageAdded(t *testing.T) { pgtest.Engines(t, testSubscriptionMessageAdded) }

func testSubscriptionMessageAdded(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	w := env.Token(t, pid, auth.MessagingRead, auth.MessagingWrite)
	P := "/api/projects/" + pid + "/conversations"
	var conv, conv2 struct{ ID int64 }
	env.Do(t, testenv.Request{Method: http.MethodPost, Path: P, Token: w, Body: map[string]any{"message": "hello"}}).JSON(t, &conv)
	env.Do(t, testenv.Request{Method: http.MethodPost, Path: P, Token: w, Body: map[string]any{"message": "elsewhere"}}).JSON(t, &conv2)

	c := connect(t, env, env.Token(t, pid, auth.MessagingRead))
	c.subscribe("m", `subscription($c: ID!) { messageAdded(conversationId: $c) { id conversationId content author authorType reactions { emoji } } }`,
		map[string]any{"c": strconv.FormatInt(conv.ID, 10)})
	c.sync()
	env.Do(t, testenv.Request{Method: http.MethodPost, Path: P + "/" + strconv.FormatInt(conv2.ID, 10) + "/messages", Token: w, Body: map[string]any{"message": "not this one"}})
	env.Do(t, testenv.Request{Method: http.MethodPost, Path: P + "/" + strconv.FormatInt(conv.ID, 10) + "/messages", Token: w, Body: map[string]any{"message": "this one"}})
	p := c.next("m")
	var msg struct {
		ID, ConversationID  int64
		Content, AuthorType string
	}
	if err := json.Unmarshal(p.Data["messageAdded"], &msg); err != nil || msg.Content != "this one" || msg.ConversationID != conv.ID || msg.AuthorType != "user" {
		t.Fatalf("messageAdded = %s %v", p.Data["messageAdded"], err)
	}

	// Errors of the source come as a next with a coded error, then complete.
	other := env.NewProject(t, "Other")
	c2 := connect(t, env, env.Token(t, other.ID, auth.MessagingRead, auth.TaskRead))
	c2.subscribe("x", `subscription($c: ID!) { messageAdded(conversationId: $c) { id } }`, map[string]any{"c": strconv.FormatInt(conv.ID, 10)})
	if p := c2.next("x"); len(p.Errors) != 1 || p.Errors[0].Extensions["code"] != "not_found" {
		t.Fatalf("another project's conversation: %+v", p)
	}
	if m := c2.read(); m.Type != "complete" || m.ID != "x" {
		t.Fatalf("want complete, got %+v", m)
	}
}

func TestSubscriptionScopes(t *testing.T) { pgtest.Engines(t, testSubscriptionScopes) }

func testSubscriptionScopes(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	c := connect(t, env, env.Token(t, pid, auth.MessagingRead))
	c.subscribe("t", `subscription { taskChanged { seq } }`, nil)
	p := c.next("t")
	if len(p.Errors) != 1 || p.Errors[0].Extensions["code"] != "forbidden" || !strings.Contains(p.Errors[0].Message, "task:read") {
		t.Fatalf("taskChanged without task:read: %+v", p)
	}
	if m := c.read(); m.Type != "complete" {
		t.Fatalf("want complete, got %+v", m)
	}
	c2 := connect(t, env, env.Token(t, pid, auth.TaskRead))
	c2.subscribe("m", `subscription { messageAdded(conversationId: "1") { id } }`, nil)
	if p := c2.next("m"); len(p.Errors) != 1 || p.Errors[0].Extensions["code"] != "forbidden" {
		t.Fatalf("messageAdded without messaging:read: %+v", p)
	}
	if m := c2.read(); m.Type != "complete" {
		t.Fatalf("want complete, got %+v", m)
	}
	c2.subscribe("neg", `subscription { taskChanged(since: -1) { seq } }`, nil)
	if p := c2.next("neg"); len(p.Errors) != 1 || p.Errors[0].Extensions["code"] != "invalid_argument" {
		t.Fatalf("since -1: %+v", p)
	}
}

func TestSubscriptionProtocol(t *testing.T) { pgtest.Engines(t, testSubscriptionProtocol) }

func testSubscriptionProtocol(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	tok := env.Token(t, pid, auth.TaskRead)

	// Credentials: a Bearer header on the upgrade, or {"token": ...} in the payload.
	c, _, err := dialWS(t, env.URL, http.Header{"Authorization": {"Bearer " + tok}})
	if err != nil {
		t.Fatal(err)
	}
	c.send(wsMsg{Type: "connection_init"})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("header credentials: %+v", m)
	}
	c.send(wsMsg{Type: "ping", Payload: mustJSON(map[string]int{"n": 1})})
	if m := c.read(); m.Type != "pong" || string(m.Payload) != `{"n":1}` {
		t.Fatalf("pong = %+v", m)
	}
	// A second connection_init: 4429.
	c.send(wsMsg{Type: "connection_init"})
	if code, _ := c.closed(); code != 4429 {
		t.Fatalf("second init: %d", code)
	}

	c, _, _ = dialWS(t, env.URL, nil)
	c.send(wsMsg{Type: "connection_init", Payload: mustJSON(map[string]string{"token": tok})})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("token in payload: %+v", m)
	}
	// Queries run too: one next, then complete.
	c.subscribe("q", `{ viewer { kind scopes } }`, nil)
	if p := c.next("q"); len(p.Errors) != 0 || !strings.Contains(string(p.Data["viewer"]), "task:read") {
		t.Fatalf("query over ws: %+v", p)
	}
	if m := c.read(); m.Type != "complete" || m.ID != "q" {
		t.Fatalf("want complete, got %+v", m)
	}
	// Errors before execution: an error message with codes, and no complete.
	c.subscribe("bad", `subscription { taskChanged { nope } }`, nil)
	if m := c.read(); m.Type != "error" || m.ID != "bad" || !strings.Contains(string(m.Payload), "invalid_argument") {
		t.Fatalf("validation error: %+v %s", m, m.Payload)
	}
	c.subscribe("two", `subscription { a: taskChanged { seq } b: taskChanged { seq } }`, nil)
	if m := c.read(); m.Type != "error" || !strings.Contains(string(m.Payload), "exactly one field") {
		t.Fatalf("two root fields: %+v %s", m, m.Payload)
	}
	// The limits apply to subscriptions too.
	deep := `subscription { taskChanged {` + strings.Repeat(` a {`, 50) + ` b` + strings.Repeat(` }`, 50) + ` } }`
	c.subscribe("deep", deep, nil)
	if m := c.read(); m.Type != "error" || !strings.Contains(string(m.Payload), "too deep") {
		t.Fatalf("deep subscription: %+v %s", m, m.Payload)
	}
	c.subscribe("dup", `subscription { taskChanged { seq } }`, nil)
	c.sync()
	c.subscribe("dup", `subscription { taskChanged { seq } }`, nil)
	if code, reason := c.closed(); code != 4409 || !strings.Contains(reason, "dup") {
		t.Fatalf("duplicate id: %d %s", code, reason)
	}

	cases := []struct {
		name string
		msgs []wsMsg
		code int
		text string
	}{
		{"subscribe before init", []wsMsg{{ID: "1", Type: "subscribe", Payload: mustJSON(map[string]string{"query": "{ viewer { kind } }"})}}, 4401, "Unauthorized"},
		{"no credentials", []wsMsg{{Type: "connection_init"}}, 4403, "missing credentials"},
		{"wrong token", []wsMsg{{Type: "connection_init", Payload: mustJSON(map[string]string{"Authorization": "Bearer adk_nope"})}}, 4403, "Forbidden"},
		{"not bearer", []wsMsg{{Type: "connection_init", Payload: mustJSON(map[string]string{"Authorization": tok})}}, 4403, "Bearer"},
		{"unknown type", []wsMsg{{Type: "start"}}, 4400, "unknown type"},
	}
	for _, tc := range cases {
		c, _, err := dialWS(t, env.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tc.msgs {
			c.send(m)
		}
		if code, reason := c.closed(); code != tc.code || !strings.Contains(reason, tc.text) {
			t.Errorf("%s: closed with %d %q, want %d %q", tc.name, code, reason, tc.code, tc.text)
		}
	}
	c, _, _ = dialWS(t, env.URL, nil)
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if code, _ := c.closed(); code != 4400 {
		t.Errorf("not JSON: %d", code)
	}

	// Without the subprotocol: 4406.
	c, _, err = dialWS(t, env.URL, nil, "graphql-ws")
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := c.closed(); code != 4406 {
		t.Errorf("no subprotocol: %d", code)
	}
	// A wrong Bearer header is refused before the upgrade, like REST; so is a foreign origin.
	if _, resp, err := dialWS(t, env.URL, http.Header{"Authorization": {"Bearer adk_wrongwrongwrongwrongwrongwrongwrong"}}); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("wrong bearer header: %v %v", err, resp)
	}
	if _, resp, err := dialWS(t, env.URL, http.Header{"Origin": {"https://evil.example"}}); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("foreign origin: %v %v", err, resp)
	}
	host := strings.TrimPrefix(env.URL, "http://")
	if c, _, err := dialWS(t, env.URL, http.Header{"Origin": {"http://" + host}}); err != nil {
		t.Errorf("own origin: %v", err)
	} else {
		c.conn.Close()
	}

	// Subscriptions are not run over plain HTTP.
	r := do(t, env, tok, `subscription { taskChanged { seq } }`, nil)
	if r.status != http.StatusBadRequest || r.code(t) != "invalid_argument" || !strings.Contains(r.Errors[0].Message, "WebSocket") {
		t.Fatalf("subscription over POST: %d %s", r.status, r.raw)
	}
}

// TestSubscriptionShutdown: the server's shutdown closes subscriptions with 1001.
func TestSubscriptionShutdown(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	env := &testenv.Env{URL: srv.URL(), Server: srv, Service: srv.Service, Client: http.DefaultClient}
	projects, err := srv.Service.Projects(context.Background(), auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, env, env.Token(t, projects[0].ID, auth.TaskRead))
	c.subscribe("s", `subscription { taskChanged { seq } }`, nil)
	c.sync()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	if code, reason := c.closed(); code != websocket.CloseGoingAway || !strings.Contains(reason, "shutting down") {
		t.Fatalf("closed with %d %q", code, reason)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
