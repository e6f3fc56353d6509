package client_test

import (
	"context"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestIfMatch: the client keeps the ETag of every task it reads or changes, and
// IfMatch with it makes a read-then-write safe: a stale one is refused with
// CodePreconditionFailed and changes nothing, the current one goes through.
func TestIfMatch(t *testing.T) { pgtest.Engines(t, testIfMatch) }

func testIfMatch(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	p := env.Project
	user := client.New(env.URL, client.WithToken(env.Token(t, p.ID, auth.TaskRead, auth.TaskWrite)))
	worker := env.Agent(t, p.ID, "worker")
	secret, err := env.Service.Project(ctx, auth.Owner(p.ID), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(env.URL, client.WithAgent(p.ID, client.AgentDigest(p.ID, secret.TokenSecret), "worker", p.Namespace))

	created, err := user.CreateTask(ctx, client.NewTask{Summary: "guarded", Steps: []string{"a"}, AgentID: &worker.ID})
	if err != nil || created.ETag == "" {
		t.Fatalf("create: %+v %v", created, err)
	}
	read, err := agent.GetTask(ctx, created.ID) // the agent reads the task...
	if err != nil || read.ETag != created.ETag {
		t.Fatalf("get: ETag %q, the create answered %q (%v)", read.ETag, created.ETag, err)
	}
	moved, err := user.SetStatus(ctx, created.ID, "Backlog", "", client.IfMatch(created.ETag)) // ...a human moves it...
	if err != nil || moved.ETag == "" || moved.ETag == read.ETag {
		t.Fatalf("set status with the current If-Match: %+v %v", moved, err)
	}
	// ...and the agent's report, decided on what it read, is refused.
	if _, err := agent.AgentCallback(ctx, created.ID, client.Callback{Status: "Doing"}, client.IfMatch(read.ETag)); !client.IsCode(err, client.CodePreconditionFailed) {
		t.Fatalf("a callback with a stale If-Match: %v, want %s", err, client.CodePreconditionFailed)
	}
	for name, change := range map[string]func(etag string) error{
		"step": func(e string) error {
			_, err := user.SetStepStatus(ctx, created.ID, 0, "completed", client.IfMatch(e))
			return err
		},
		"agent":  func(e string) error { _, err := user.AssignAgent(ctx, created.ID, nil, client.IfMatch(e)); return err },
		"delete": func(e string) error { return user.DeleteTask(ctx, created.ID, client.IfMatch(e)) },
	} {
		if err := change(read.ETag); !client.IsCode(err, client.CodePreconditionFailed) {
			t.Fatalf("%s with a stale If-Match: %v", name, err)
		}
	}
	now, err := user.GetTask(ctx, created.ID)
	if err != nil || now.Status != "Backlog" || now.ETag != moved.ETag || now.Steps[0].Status != "pending" || now.AgentID == nil {
		t.Fatalf("after the refused changes: %+v %v", now, err)
	}
	if err := user.DeleteTask(ctx, created.ID, client.IfMatch(now.ETag)); err != nil {
		t.Fatalf("delete with the current If-Match: %v", err)
	}
}
