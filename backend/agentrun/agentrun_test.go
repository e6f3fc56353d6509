package agentrun

import (
	"context"
	"io"
	"log/slog"
	"net/http"
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
