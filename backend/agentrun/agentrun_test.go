package agentrun

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// beforeCallback runs hook (once) just before the first agent callback leaves.
type beforeCallback struct {
	once sync.Once
	hook func()
}

func (b *beforeCallback) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/api/agent_callback/") {
		b.once.Do(b.hook)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestAgentRespectsAChangeMeanwhile: a human moves the task between the agent's read
// and its callback. The callback carries If-Match, so it is refused instead of
// overwriting the human's change, and the agent neither marks the task Failed nor
// touches it again: Backlog is not work.
func TestAgentRespectsAChangeMeanwhile(t *testing.T) {
	pgtest.Engines(t, testAgentRespectsAChangeMeanwhile)
}

func testAgentRespectsAChangeMeanwhile(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	p := env.Project
	owner := auth.Owner(p.ID)
	worker := env.Agent(t, p.ID, "careful")
	task, err := env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "maybe later",
		Steps: []service.StepInput{{Title: "one"}}, AgentID: &worker.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	project, err := env.Service.Project(ctx, owner, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	hook := &beforeCallback{hook: func() {
		if _, err := env.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusBacklog, nil, nil, nil); err != nil {
			t.Error(err)
		}
	}}
	a := New(Config{URL: env.URL, ProjectID: p.ID, Digest: client.AgentDigest(p.ID, project.TokenSecret), Name: "careful",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	a.api = client.New(env.URL, client.WithAgent(p.ID, a.cfg.Digest, "careful", ""), client.WithHTTPClient(&http.Client{Transport: hook}))
	for range 2 {
		if err := a.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := env.Service.GetTask(ctx, owner, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != model.StatusBacklog || len(got.Conversation) != 0 || got.Steps[0].Status != model.StepPending {
		t.Fatalf("after the agent's passes the task is %s with conversation %+v and step %s; want it left in Backlog as the human put it",
			got.Status, got.Conversation, got.Steps[0].Status)
	}
}

// TestAgentAnswersWhenMentioned runs the agent against a real server: a person's message
// that mentions it gets a short reply in that conversation; a message that does not, or
// that mentions another agent, or an agent's own message mentioning it, gets none.
func TestAgentAnswersWhenMentioned(t *testing.T) {
	env := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := env.Project
	owner := auth.Owner(p.ID)
	env.Agent(t, p.ID, "worker")
	other := env.Agent(t, p.ID, "other")
	project, err := env.Service.Project(ctx, owner, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var logs testenv.SyncBuffer
	a := New(Config{URL: env.URL, ProjectID: p.ID, Digest: client.AgentDigest(p.ID, project.TokenSecret), Name: "worker",
		Poll: time.Hour, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	// Wait until its stream is open: live events only reach it from then on.
	for !strings.Contains(logs.String(), "event stream open") {
		time.Sleep(10 * time.Millisecond)
	}

	person := &auth.Principal{Kind: auth.KindToken, ProjectID: p.ID, Name: "ann", Scopes: auth.AgentScopes}
	conv, err := env.Service.CreateConversation(ctx, person, service.CreateConversationInput{Message: ptr("hello all")}, "")
	if err != nil {
		t.Fatal(err)
	}
	post := func(who *auth.Principal, text string) {
		if _, err := env.Service.PostMessage(ctx, who, conv.UUID, service.PostMessageInput{Message: &text}, ""); err != nil {
			t.Fatal(err)
		}
	}
	post(auth.Agent(p.ID, other.ID, "other"), "@worker, from one agent to another")
	post(person, "@other, are you there?")
	post(person, "@worker can you help with the release?")

	var msgs []model.Message
	for deadline := time.Now().Add(10 * time.Second); ; {
		if msgs, _, err = env.Service.ListMessages(ctx, owner, conv.UUID, service.PageInput{}); err != nil {
			t.Fatal(err)
		}
		if len(msgs) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // room for a wrong second reply to show up
	if msgs, _, err = env.Service.ListMessages(ctx, owner, conv.UUID, service.PageInput{}); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 5 {
		t.Fatalf("%d messages %+v; want the four posted and one reply\nagent log:\n%s", len(msgs), msgs, logs.String())
	}
	reply := msgs[4]
	if reply.Author != "worker" || reply.AuthorType != model.ActorAgent || !strings.Contains(reply.Content, "Hi ann, worker here") {
		t.Fatalf("last message %+v, want the worker's short reply to ann", reply)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestAgentAsksWithOptionsAndADeadline: a question step's bracketed answers become the
// question's options, and every question carries the --answer-within deadline.
func TestAgentAsksWithOptionsAndADeadline(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	p := env.Project
	owner := auth.Owner(p.ID)
	worker := env.Agent(t, p.ID, "asker")
	task, err := env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "release",
		Steps: []service.StepInput{{Title: "Ship it? [Approve, Reject]"}}, AgentID: &worker.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	project, err := env.Service.Project(ctx, owner, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := New(Config{URL: env.URL, ProjectID: p.ID, Digest: client.AgentDigest(p.ID, project.TokenSecret), Name: "asker",
		AnswerWithin: time.Hour, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := a.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	asked, err := env.Service.GetTask(ctx, owner, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if asked.Status != model.StatusWaiting || *asked.WaitingDetails != "Ship it?" || strings.Join(asked.WaitingOptions, "|") != "Approve|Reject" ||
		asked.WaitingExpiresAt == nil || time.Until(*asked.WaitingExpiresAt) < 59*time.Minute || *asked.WaitingOnExpiry != "fail" {
		t.Fatalf("the agent asked: %+v", asked)
	}
	choice := "Approve"
	if _, err := env.Service.Respond(ctx, owner, task.ID, service.RespondInput{Choice: &choice}, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	done, err := env.Service.GetTask(ctx, owner, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != model.StatusDone || !strings.Contains(done.Conversation[1].Content, `"Approve" to "Ship it?"`) {
		t.Fatalf("after the answer: %s, %+v", done.Status, done.Conversation)
	}
}

// TestAgentWaitsForTheServer: an agent started just before its server (the README's
// quick start starts both in the background) waits for it to answer instead of exiting;
// a server that answers with a refusal (a wrong secret) ends it at once.
func TestAgentWaitsForTheServer(t *testing.T) {
	env := testenv.Start(t)
	p := env.Project
	owner := auth.Owner(p.ID)
	env.Agent(t, p.ID, "worker")
	project, err := env.Service.Project(context.Background(), owner, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	// An address where nothing listens yet; the server appears there a second later.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	target, _ := url.Parse(env.URL)
	go func() {
		time.Sleep(time.Second)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		srv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target)}
		t.Cleanup(func() { srv.Close() })
		_ = srv.Serve(l)
	}()
	var logs testenv.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := New(Config{URL: "http://" + addr, ProjectID: p.ID, Digest: client.AgentDigest(p.ID, project.TokenSecret), Name: "worker",
		Poll: time.Hour, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "agent started") {
		select {
		case err := <-done:
			t.Fatalf("the agent ended before its server answered: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not start once its server answered:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "waiting for agentdesk to answer") {
		t.Errorf("the agent did not say it was waiting:\n%s", logs.String())
	}

	wrong := New(Config{URL: env.URL, ProjectID: p.ID, Digest: client.AgentDigest(p.ID, "not the secret"), Name: "worker", Poll: time.Hour,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	start := time.Now()
	if err := wrong.Run(ctx); err == nil || time.Since(start) > 20*time.Second { // not startWait (30 s)
		t.Fatalf("a wrong secret: %v after %s; want an error at once", err, time.Since(start))
	}
}
