package a2a_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// world is a server with an agent "worker", and an A2A client of it holding a token.
type world struct {
	env     *testenv.Env
	project string
	worker  *model.Agent
	base    string // the worker's A2A endpoint
	card    *a2a.AgentCard
	client  *a2aclient.Client
	ctx     context.Context // carries the client's session, whose credential is the token
}

func newWorld(t *testing.T, scopes ...string) *world {
	t.Helper()
	return newWorldOn(t, testenv.Start(t), scopes...)
}

// newWorldOn is newWorld on a server of the test's own.
func newWorldOn(t *testing.T, env *testenv.Env, scopes ...string) *world {
	t.Helper()
	w := &world{env: env, project: env.Project.ID}
	w.worker = env.Agent(t, w.project, "worker")
	w.base = env.URL + "/a2a/" + w.project + "/worker"
	card, err := agentcard.NewResolver(env.Client).Resolve(context.Background(), w.base)
	if err != nil {
		t.Fatalf("resolve the card: %v", err)
	}
	w.card = card
	w.client = w.clientWith(t, env.Token(t, w.project, scopes...))
	return w
}

// clientWith is an A2A client made from the agent's card, presenting token as the card's
// security scheme asks (the SDK's AuthInterceptor).
func (w *world) clientWith(t *testing.T, token string) *a2aclient.Client {
	t.Helper()
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("test", "bearer", a2aclient.AuthCredential(token))
	w.ctx = a2aclient.WithSessionID(context.Background(), "test")
	c, err := a2aclient.NewFromCard(context.Background(), w.card, a2aclient.WithInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
	if err != nil {
		t.Fatalf("client from the card: %v", err)
	}
	return c
}

// callback reports as the agent worker on its task, over REST.
func (w *world) callback(t *testing.T, id a2a.TaskID, body string) {
	t.Helper()
	r := w.env.Do(t, testenv.Request{Method: "POST", Path: "/api/agent_callback/" + string(id),
		Header: w.env.AgentHeaders(t, w.project, "worker"), Body: `{"project_id":"` + w.project + `",` + body + `}`})
	if r.Status != http.StatusOK {
		t.Fatalf("callback %s: %d %s", body, r.Status, r.Body)
	}
}

func (w *world) board(t *testing.T, id a2a.TaskID) *model.Task {
	t.Helper()
	var n int64
	fmt.Sscan(string(id), &n)
	task, err := w.env.Service.GetTask(context.Background(), auth.Owner(w.project), n)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func text(m *a2a.Message) string {
	if m == nil || len(m.Parts) != 1 {
		return fmt.Sprintf("%v", m)
	}
	p, _ := m.Parts[0].(a2a.TextPart)
	return p.Text
}

func userMessage(taskID a2a.TaskID, s string) *a2a.MessageSendParams {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: s})
	m.TaskID = taskID
	return &a2a.MessageSendParams{Message: m}
}

// events collects a stream's events on a channel, closed when the stream ends.
func events(seq func(func(a2a.Event, error) bool)) <-chan any {
	out := make(chan any, 32)
	go func() {
		defer close(out)
		for e, err := range seq {
			if err != nil {
				out <- err
				return
			}
			out <- e
		}
	}()
	return out
}

func next(t *testing.T, ch <-chan any) any {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended early")
		}
		if err, isErr := e.(error); isErr {
			t.Fatalf("stream error: %v", err)
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return nil
}

func wantStatus(t *testing.T, e any, state a2a.TaskState, final bool) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	u, ok := e.(*a2a.TaskStatusUpdateEvent)
	if !ok || u.Status.State != state || u.Final != final {
		t.Fatalf("event %#v; want a status update %s (final %v)", e, state, final)
	}
	return u
}

func wantEnd(t *testing.T, ch <-chan any) {
	t.Helper()
	select {
	case e, ok := <-ch:
		if ok {
			t.Fatalf("after the final event: %#v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end after its final event")
	}
}

// TestAgentCard: the card names the agent, shows its profile and skills, and tells a
// client where and how to call it; an unknown agent has none.
func TestAgentCard(t *testing.T) {
	env := testenv.Start(t)
	pid := env.Project.ID
	owner := auth.Owner(pid)
	ctx := context.Background()
	agent := env.Agent(t, pid, "translator")
	name, desc := "Translator", "Translates release notes"
	if _, err := env.Service.UpdateAgent(ctx, owner, agent.ID, service.UpdateAgentInput{DisplayName: &name, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	skill, err := env.Service.CreateSkill(ctx, owner, "french", "Writes French")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Service.SetAgentSkill(ctx, owner, agent.ID, skill.ID, true); err != nil {
		t.Fatal(err)
	}
	base := env.URL + "/a2a/" + pid + "/translator"
	card, err := agentcard.NewResolver(env.Client).Resolve(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != name || card.Description != desc || card.URL != base || card.ProtocolVersion != "0.3.0" ||
		card.PreferredTransport != a2a.TransportProtocolJSONRPC || !card.Capabilities.Streaming {
		t.Errorf("card %+v", card)
	}
	if len(card.Skills) != 1 || card.Skills[0].ID != "french" || card.Skills[0].Description != "Writes French" {
		t.Errorf("skills %+v; want french", card.Skills)
	}
	scheme, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme)
	if !ok || !strings.EqualFold(scheme.Scheme, "bearer") || len(card.Security) != 1 {
		t.Errorf("security %+v %+v; want the bearer scheme, required", card.SecuritySchemes, card.Security)
	}
	for _, path := range []string{"/a2a/" + pid + "/nobody", "/a2a/prj_none/translator"} {
		if _, err := agentcard.NewResolver(env.Client).Resolve(ctx, env.URL+path); !isStatus(err, http.StatusNotFound) {
			t.Errorf("card of %s: %v; want 404", path, err)
		}
	}
}

func isStatus(err error, status int) bool {
	var s *agentcard.ErrStatusNotOK
	return errors.As(err, &s) && s.StatusCode == status
}

// TestSendStreamAnswerComplete is the whole loop with a2a-go's client: a message becomes
// a task for the agent, its updates stream, its question is answered by the client's next
// message, and its result comes back as an artifact.
func TestSendStreamAnswerComplete(t *testing.T) {
	w := newWorld(t, auth.TaskRead, auth.TaskWrite)
	send := userMessage("", "Translate the release notes\nInto French, please.\nKeep the headings.")
	res, err := w.client.SendMessage(w.ctx, send)
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("message/send: %#v; want a submitted task", res)
	}
	onBoard := w.board(t, task.ID)
	if onBoard.Summary != "Translate the release notes" || onBoard.Details != "Into French, please.\nKeep the headings." ||
		onBoard.AgentName != "worker" || onBoard.Status != model.StatusTodo {
		t.Fatalf("on the board: %+v", onBoard)
	}
	again, err := w.client.SendMessage(w.ctx, send) // the same messageId: the same task
	if err != nil || again.(*a2a.Task).ID != task.ID {
		t.Fatalf("the message sent again: %v %v; want task %s", again, err, task.ID)
	}

	stream := events(w.client.ResubscribeToTask(w.ctx, &a2a.TaskIDParams{ID: task.ID}))
	if first, ok := next(t, stream).(*a2a.Task); !ok || first.ID != task.ID || first.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("resubscribe's first event: %#v", first)
	}
	w.callback(t, task.ID, `"status":"Doing","message":"Reading the notes"`)
	wantStatus(t, next(t, stream), a2a.TaskStateWorking, false)
	w.callback(t, task.ID, `"waiting_details":"Formal or casual?"`)
	asked := wantStatus(t, next(t, stream), a2a.TaskStateInputRequired, true)
	if text(asked.Status.Message) != "Formal or casual?" || asked.Status.Message.Role != a2a.MessageRoleAgent {
		t.Errorf("the question's status message: %#v", asked.Status.Message)
	}
	wantEnd(t, stream)

	// The client answers with its next message, streamed.
	stream = events(w.client.SendStreamingMessage(w.ctx, userMessage(task.ID, "Formal")))
	if first, ok := next(t, stream).(*a2a.Task); !ok || first.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the answer's first event: %#v; want the task, working", first)
	}
	onBoard = w.board(t, task.ID)
	if n := len(onBoard.Conversation); onBoard.Status != model.StatusDoing || n == 0 ||
		onBoard.Conversation[n-1].Content != "Formal" || onBoard.Conversation[n-1].Question != "Formal or casual?" {
		t.Fatalf("the answer on the board: %+v", onBoard)
	}
	w.callback(t, task.ID, `"status":"Done","message":"Voici les notes."`)
	art, ok := next(t, stream).(*a2a.TaskArtifactUpdateEvent)
	if !ok || len(art.Artifact.Parts) != 1 || art.Artifact.Parts[0].(a2a.TextPart).Text != "Voici les notes." {
		t.Fatalf("want the result as an artifact, got %#v", art)
	}
	wantStatus(t, next(t, stream), a2a.TaskStateCompleted, true)
	wantEnd(t, stream)

	got, err := w.client.GetTask(w.ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	var history []string
	for _, m := range got.History {
		history = append(history, string(m.Role)+": "+text(m))
	}
	want := []string{"user: Translate the release notes\nInto French, please.\nKeep the headings.",
		"agent: Reading the notes", "user: Formal", "agent: Voici les notes."}
	if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || strings.Join(history, "|") != strings.Join(want, "|") {
		t.Errorf("tasks/get: %s, %d artifacts, history %q; want completed, 1, %q", got.Status.State, len(got.Artifacts), history, want)
	}
	one := 1
	if got, err := w.client.GetTask(w.ctx, &a2a.TaskQueryParams{ID: task.ID, HistoryLength: &one}); err != nil || len(got.History) != 1 || text(got.History[0]) != "Voici les notes." {
		t.Errorf("historyLength 1: %v %v", got, err)
	}
}

// TestCancel: tasks/cancel fails the task with reason "canceled", seen by a stream; a
// finished task cannot be canceled.
func TestCancel(t *testing.T) {
	w := newWorld(t, auth.TaskRead, auth.TaskWrite)
	stream := events(w.client.SendStreamingMessage(w.ctx, userMessage("", "Count the stars")))
	first, ok := next(t, stream).(*a2a.Task)
	if !ok || first.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("message/stream's first event: %#v", first)
	}
	canceled, err := w.client.CancelTask(w.ctx, &a2a.TaskIDParams{ID: first.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateFailed || text(canceled.Status.Message) != "canceled" {
		t.Fatalf("tasks/cancel: %+v %v; want failed, canceled", canceled, err)
	}
	wantStatus(t, next(t, stream), a2a.TaskStateFailed, true)
	wantEnd(t, stream)
	if onBoard := w.board(t, first.ID); onBoard.Status != model.StatusFailed {
		t.Errorf("on the board: %s; want Failed", onBoard.Status)
	}
	if _, err := w.client.CancelTask(w.ctx, &a2a.TaskIDParams{ID: first.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("canceling a failed task: %v; want task not cancelable", err)
	}
}

// TestRefusals: what the endpoint refuses, and how an A2A client learns why.
func TestRefusals(t *testing.T) {
	w := newWorld(t, auth.TaskRead, auth.TaskWrite)
	res, err := w.client.SendMessage(w.ctx, userMessage("", "Water the plants"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	other := w.env.Agent(t, w.project, "other")
	theirs, err := w.env.Service.CreateTask(context.Background(), auth.Owner(w.project), service.CreateTaskInput{Summary: "theirs", AgentID: &other.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	file := a2a.NewMessage(a2a.MessageRoleUser, a2a.FilePart{File: a2a.FileURI{URI: "https://example.com/a.pdf"}})
	cases := []struct {
		name string
		call func() error
		want error
		says string
	}{
		{"an answer to a task not waiting", func() error {
			_, err := w.client.SendMessage(w.ctx, userMessage(id, "yes"))
			return err
		}, a2a.ErrInvalidParams, "not waiting for input"},
		{"another agent's task", func() error {
			_, err := w.client.GetTask(w.ctx, &a2a.TaskQueryParams{ID: a2a.TaskID(fmt.Sprint(theirs.ID))})
			return err
		}, a2a.ErrTaskNotFound, `not a task of agent "worker"`},
		{"a task id that is no number", func() error {
			_, err := w.client.GetTask(w.ctx, &a2a.TaskQueryParams{ID: "abc"})
			return err
		}, a2a.ErrTaskNotFound, "numeric ids"},
		{"a file", func() error {
			_, err := w.client.SendMessage(w.ctx, &a2a.MessageSendParams{Message: file})
			return err
		}, a2a.ErrUnsupportedContentType, "file parts"},
		{"an empty text", func() error {
			_, err := w.client.SendMessage(w.ctx, userMessage("", "  "))
			return err
		}, a2a.ErrInvalidParams, "no text"},
		{"a read-only token sending", func() error {
			_, err := w.clientWith(t, w.env.Token(t, w.project, auth.TaskRead)).SendMessage(w.ctx, userMessage("", "hello"))
			return err
		}, a2a.ErrInvalidRequest, "task:write"},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want %v saying %q", c.name, err, c.want, c.says)
		}
	}

	// Bearer tokens only: none (or an agent's headers) is 401 with WWW-Authenticate;
	// another project's token finds no agent here; an unknown agent is 404.
	rpc := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + string(id) + `"}}`
	elsewhere := w.env.NewProject(t, "elsewhere")
	for _, c := range []struct {
		path, token string
		header      http.Header
		status      int
	}{
		{"/a2a/" + w.project + "/worker", "", nil, http.StatusUnauthorized},
		{"/a2a/" + w.project + "/worker", "", w.env.AgentHeaders(t, w.project, "worker"), http.StatusUnauthorized},
		{"/a2a/" + w.project + "/worker", w.env.Token(t, elsewhere.ID, auth.TaskRead), nil, http.StatusNotFound},
		{"/a2a/" + w.project + "/nobody", w.env.Token(t, w.project, auth.TaskRead), nil, http.StatusNotFound},
	} {
		r := w.env.Do(t, testenv.Request{Method: "POST", Path: c.path, Token: c.token, Header: c.header, Body: rpc})
		if r.Status != c.status {
			t.Errorf("POST %s: %d %s; want %d", c.path, r.Status, r.Body, c.status)
		}
		if c.status == http.StatusUnauthorized && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without WWW-Authenticate: Bearer: %v", r.Header)
		}
	}
}
