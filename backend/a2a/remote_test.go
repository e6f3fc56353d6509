package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// translator is a remote A2A agent played by a2a-go's own server: a new task makes it
// work, then ask which language (input-required); the answer completes the task with an
// artifact in two chunks. A request saying "explode" fails (an internal error, to the client); one
// saying "hang" never answers.
type translator struct {
	mu       sync.Mutex
	received []string // each message's task (its id, "" for a new one) and text
}

func (x *translator) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	text := rc.Message.Parts[0].(a2a.TextPart).Text
	x.mu.Lock()
	x.received = append(x.received, fmt.Sprintf("%s:%s", rc.Message.TaskID, text))
	x.mu.Unlock()
	switch {
	case strings.Contains(text, "explode"):
		return errors.New("the model is down")
	case strings.Contains(text, "hang"):
		<-ctx.Done()
		return ctx.Err()
	case rc.StoredTask == nil:
		if err := q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
		if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking,
			a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: "Reading the notes"}))); err != nil {
			return err
		}
		ask := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateInputRequired,
			a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: "Into which language?"}))
		ask.Final = true
		return q.Write(ctx, ask)
	default:
		// Slow to take the answer in: a send not waiting for the end (agentdesk's) is
		// answered with the task still input-required, its question already answered.
		time.Sleep(300 * time.Millisecond)
		result := a2a.NewArtifactEvent(rc, a2a.TextPart{Text: "Notes de version, in " + text})
		if err := q.Write(ctx, result); err != nil {
			return err
		}
		if err := q.Write(ctx, a2a.NewArtifactUpdateEvent(rc, result.Artifact.ID, a2a.TextPart{Text: "Fin des notes."})); err != nil {
			return err // a second chunk of the same artifact
		}
		done := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCompleted, nil)
		done.Final = true
		return q.Write(ctx, done)
	}
}

func (x *translator) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil))
}

func (x *translator) messages() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.received...)
}

// serveTranslator runs the translator on loopback; its JSON-RPC endpoint wants the
// bearer token "s3cret". streaming says what its card says.
func serveTranslator(t *testing.T, streaming bool) (*translator, string) {
	t.Helper()
	return serveTranslatorWith(t, streaming, nil)
}

// serveTranslatorWith is serveTranslator with its card changed by edit; the endpoint
// wants "s3cret" in the header the card's apiKey scheme names, if it has one.
func serveTranslatorWith(t *testing.T, streaming bool, edit func(card *a2a.AgentCard)) (*translator, string) {
	t.Helper()
	x := &translator{}
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(x))
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &a2a.AgentCard{Name: "Translator", Description: "Translates release notes.", URL: srv.URL + "/rpc",
		PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0", Version: "1",
		Capabilities:      a2a.AgentCapabilities{Streaming: streaming},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills:          []a2a.AgentSkill{{ID: "translate", Name: "Translate", Description: "Into any language", Tags: []string{"i18n"}}},
		SecuritySchemes: a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}},
		Security:        []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}}}
	if edit != nil {
		edit(card)
	}
	apiKeyHeader := ""
	if k, ok := card.SecuritySchemes["key"].(a2a.APIKeySecurityScheme); ok {
		apiKeyHeader = k.Name
	}
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/rpc", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (apiKeyHeader == "" && r.Header.Get("Authorization") != "Bearer s3cret") ||
			(apiKeyHeader != "" && r.Header.Get(apiKeyHeader) != "s3cret") {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		rpc.ServeHTTP(w, r)
	}))
	return x, srv.URL + "/.well-known/agent-card.json"
}

// fastRemote shortens the remote sender's waits for the test.
func fastRemote(t *testing.T) {
	poll, backoff, timeout := service.RemotePoll, service.RemoteBackoff, service.RemoteAttemptTimeout
	service.RemotePoll, service.RemoteBackoff, service.RemoteAttemptTimeout = 200*time.Millisecond, []time.Duration{100 * time.Millisecond}, 2*time.Second
	t.Cleanup(func() {
		service.RemotePoll, service.RemoteBackoff, service.RemoteAttemptTimeout = poll, backoff, timeout
	})
}

type remoteWorld struct {
	env   *testenv.Env
	admin string
	agent int64
}

// newRemoteWorld is a server that may reach loopback, with the translator registered
// over GraphQL as "translator".
func newRemoteWorld(t *testing.T, engine string, streaming bool) (*remoteWorld, *translator) {
	t.Helper()
	fastRemote(t)
	x, cardURL := serveTranslator(t, streaming)
	env := testenv.StartWithOn(t, engine, server.Config{WebhooksAllowPrivate: true})
	w := &remoteWorld{env: env, admin: env.Token(t, env.Project.ID, auth.Admin, auth.TaskRead, auth.TaskWrite)}
	var got struct {
		Agent       struct{ ID int64 }
		Name, URL   string
		Streaming   bool
		Skills      []struct{ ID, Name string }
		Kind        string `json:"credentialKind"`
		Description string
	}
	w.graphql(t, `mutation($u: String!) { registerRemoteAgent(name: "translator", cardUrl: $u, credentialKind: "bearer", credential: "s3cret") {
		agent { id } name description url streaming skills { id name } credentialKind } }`, map[string]any{"u": cardURL}, "registerRemoteAgent", &got)
	if got.Name != "Translator" || got.Description != "Translates release notes." || !strings.HasSuffix(got.URL, "/rpc") ||
		got.Streaming != streaming || len(got.Skills) != 1 || got.Skills[0].ID != "translate" || got.Kind != "bearer" {
		t.Fatalf("registered: %+v", got)
	}
	w.agent = got.Agent.ID
	return w, x
}

func (w *remoteWorld) graphql(t *testing.T, query string, vars map[string]any, field string, into any) {
	t.Helper()
	r := w.env.Do(t, testenv.Request{Method: "POST", Path: "/graphql", Token: w.admin, Body: map[string]any{"query": query, "variables": vars}})
	var body struct {
		Data   map[string]json.RawMessage
		Errors []struct{ Message string }
	}
	r.JSON(t, &body)
	if r.Status != http.StatusOK || len(body.Errors) > 0 {
		t.Fatalf("graphql: %d %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(body.Data[field], into); err != nil {
		t.Fatal(err)
	}
}

// assign creates a task for the remote agent over REST.
func (w *remoteWorld) assign(t *testing.T, summary, details string) int64 {
	t.Helper()
	r := w.env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: w.admin,
		Body: map[string]any{"summary": summary, "details": details, "agent_id": w.agent}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create task: %d %s", r.Status, r.Body)
	}
	var task struct{ ID int64 }
	r.JSON(t, &task)
	return task.ID
}

// waitFor waits until the task satisfies ok, and returns it.
func (w *remoteWorld) waitFor(t *testing.T, id int64, what string, ok func(*model.Task) bool) *model.Task {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		task, err := w.env.Service.GetTask(context.Background(), auth.Owner(w.env.Project.ID), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(task) {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d never %s: %s %v %+v", id, what, task.Status, task.WaitingDetails, task.Conversation)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func said(task *model.Task, role, content string) bool {
	for _, e := range task.Conversation {
		if e.Role == role && strings.Contains(e.Content, content) {
			return true
		}
	}
	return false
}

// TestRemoteAgent: a task assigned to a remote agent (a2a-go's server on loopback) is
// sent to it with its credential; its work and question come back (Waiting, the
// question as waiting_details); the answer given over REST reaches it on the same remote
// task, and it completes: the board shows Done, the artifact in the conversation. Over
// message/stream and over message/send (an agent that does not stream, followed with
// tasks/get). On both engines.
func TestRemoteAgent(t *testing.T) { pgtest.Engines(t, testRemoteAgent) }

func testRemoteAgent(t *testing.T, engine string) {
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			w, x := newRemoteWorld(t, engine, streaming)
			id := w.assign(t, "Translate the release notes", "All of them.")
			task := w.waitFor(t, id, "Waiting", func(task *model.Task) bool { return task.Status == model.StatusWaiting })
			if task.WaitingDetails == nil || *task.WaitingDetails != "Into which language?" {
				t.Fatalf("the question: %v", task.WaitingDetails)
			}
			if streaming && !said(task, model.RoleAssistant, "Reading the notes") { // a polled agent is seen once it waits
				t.Fatalf("its status message is not in the conversation: %+v", task.Conversation)
			}
			got := x.messages()
			if len(got) != 1 || got[0] != ":Translate the release notes\n\nAll of them." {
				t.Fatalf("the remote agent received %q", got)
			}

			r := w.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", id), Token: w.admin,
				Body: map[string]any{"response": "French"}})
			if r.Status != http.StatusOK {
				t.Fatalf("respond: %d %s", r.Status, r.Body)
			}
			task = w.waitFor(t, id, "Done", func(task *model.Task) bool { return task.Status == model.StatusDone })
			if !said(task, model.RoleAssistant, "Notes de version, in French") || !said(task, model.RoleAssistant, "Fin des notes.") {
				t.Fatalf("the artifact is not in the conversation: %+v", task.Conversation)
			}
			got = x.messages()
			if len(got) != 2 || !strings.HasSuffix(got[1], ":French") || strings.HasPrefix(got[1], ":") {
				t.Fatalf("the answer did not reach the remote task: %q", got)
			}
			var done []struct{ ID int64 }
			w.env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks?status=Done", Token: w.admin}).JSON(t, &done)
			if len(done) != 1 || done[0].ID != id {
				t.Fatalf("the board's Done: %+v", done)
			}
		})
	}
}

// TestRemoteAgentFailures: an agent that errors, and one that does not answer in time:
// each failed attempt is written to the task's conversation, and after the last retry
// the task fails. The card's fetch failing, or reaching loopback without
// --webhooks-allow-private, refuses the registration with the reason.
func TestRemoteAgentFailures(t *testing.T) {
	w, _ := newRemoteWorld(t, "sqlite", true)
	service.RemoteAttemptTimeout = 500 * time.Millisecond
	for _, c := range []struct{ summary, cause string }{
		{"explode, please", "internal error"}, // a2asrv keeps the executor's error to itself
		{"hang, please", "no answer within 500ms"},
	} {
		id := w.assign(t, c.summary, "")
		task := w.waitFor(t, id, "Failed", func(task *model.Task) bool { return task.Status == model.StatusFailed })
		if !said(task, model.RoleUser, "(attempt 1 at sending the task to it; trying again in 100ms)") ||
			!said(task, model.RoleUser, "Gave up after 2 attempts") || !said(task, model.RoleUser, c.cause) {
			t.Fatalf("%s: the failures are not on the task: %+v", c.summary, task.Conversation)
		}
	}

	register := func(env *testenv.Env, token, cardURL string) *testenv.Response {
		return env.Do(t, testenv.Request{Method: "POST", Path: "/graphql", Token: token, Body: map[string]any{
			"query": `mutation($u: String!) { registerRemoteAgent(name: "other", cardUrl: $u) { name } }`, "variables": map[string]any{"u": cardURL}}})
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if r := register(w.env, w.admin, closed.URL+"/card"); !strings.Contains(string(r.Body), "could not be fetched") {
		t.Fatalf("an unreachable card: %s", r.Body)
	}
	_, cardURL := serveTranslator(t, true)
	strict := testenv.Start(t)
	admin := strict.Token(t, strict.Project.ID, auth.Admin)
	if r := register(strict, admin, cardURL); !strings.Contains(string(r.Body), "is a loopback address") ||
		!strings.Contains(string(r.Body), "--webhooks-allow-private") {
		t.Fatalf("loopback without --webhooks-allow-private: %s", r.Body)
	}
}

// TestRemoteAgentAPIKey: an API key is sent in the header the card's apiKey scheme names.
func TestRemoteAgentAPIKey(t *testing.T) {
	fastRemote(t)
	_, cardURL := serveTranslatorWith(t, true, func(card *a2a.AgentCard) {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{"key": a2a.APIKeySecurityScheme{In: a2a.APIKeySecuritySchemeInHeader, Name: "X-Agent-Key"}}
		card.Security = []a2a.SecurityRequirements{{"key": a2a.SecuritySchemeScopes{}}}
	})
	env := testenv.StartWith(t, server.Config{WebhooksAllowPrivate: true})
	w := &remoteWorld{env: env, admin: env.Token(t, env.Project.ID, auth.Admin, auth.TaskRead, auth.TaskWrite)}
	var got struct{ Agent struct{ ID int64 } }
	w.graphql(t, `mutation($u: String!) { registerRemoteAgent(name: "keyed", cardUrl: $u, credentialKind: "apikey", credential: "s3cret") { agent { id } } }`,
		map[string]any{"u": cardURL}, "registerRemoteAgent", &got)
	w.agent = got.Agent.ID
	id := w.assign(t, "Translate this", "")
	w.waitFor(t, id, "Waiting", func(task *model.Task) bool { return task.Status == model.StatusWaiting })
}

// TestRemoteAgentJSONRPCInterface: an agent preferring gRPC, its JSON-RPC endpoint among
// its additional interfaces, is registered and sent its task there.
func TestRemoteAgentJSONRPCInterface(t *testing.T) {
	fastRemote(t)
	for name, edit := range map[string]func(card *a2a.AgentCard){
		"grpcfirst": func(card *a2a.AgentCard) {
			grpcTarget := strings.TrimPrefix(strings.TrimSuffix(card.URL, "/rpc"), "http://") // host:port, as gRPC names it
			card.AdditionalInterfaces = []a2a.AgentInterface{
				{Transport: a2a.TransportProtocolGRPC, URL: grpcTarget},
				{Transport: a2a.TransportProtocolHTTPJSON, URL: strings.TrimSuffix(card.URL, "/rpc") + "/v1"},
				{Transport: a2a.TransportProtocolJSONRPC, URL: card.URL},
			}
			card.PreferredTransport, card.URL = a2a.TransportProtocolGRPC, grpcTarget
		},
		// No preferred transport: JSON-RPC at the card's url, A2A's default (a2a-go's
		// client, given the card, finds no transport it can use).
		"nopreference": func(card *a2a.AgentCard) { card.PreferredTransport = "" },
	} {
		t.Run(name, func(t *testing.T) {
			_, cardURL := serveTranslatorWith(t, true, edit)
			env := testenv.StartWith(t, server.Config{WebhooksAllowPrivate: true})
			w := &remoteWorld{env: env, admin: env.Token(t, env.Project.ID, auth.Admin, auth.TaskRead, auth.TaskWrite)}
			var got struct{ Agent struct{ ID int64 } }
			w.graphql(t, `mutation($u: String!) { registerRemoteAgent(name: "translator", cardUrl: $u, credentialKind: "bearer", credential: "s3cret") { agent { id } } }`,
				map[string]any{"u": cardURL}, "registerRemoteAgent", &got)
			w.agent = got.Agent.ID
			id := w.assign(t, "Translate this", "")
			w.waitFor(t, id, "Waiting", func(task *model.Task) bool { return task.Status == model.StatusWaiting })
		})
	}
}
