package client_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestClient drives the SDK against a real server: a user and an agent through a task's
// whole life, a conversation with a document, the event stream and typed errors.
func TestClient(t *testing.T) { pgtest.Engines(t, testClient) }

func testClient(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	p := env.Project
	user := client.New(env.URL, client.WithToken(env.Token(t, p.ID, "task:read", "task:write", "messaging:read", "messaging:write")))
	worker := env.Agent(t, p.ID, "worker")
	secret, err := env.Service.Project(ctx, auth.Owner(p.ID), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(env.URL, client.WithAgent(p.ID, client.AgentDigest(p.ID, secret.TokenSecret), "worker", p.Namespace))

	stream, err := user.Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	conv, err := user.CreateConversation(ctx, p.ID, "kick-off", "launch")
	if err != nil || conv.Name == nil || *conv.Name != "launch" {
		t.Fatalf("create conversation: %+v %v", conv, err)
	}
	task, err := user.CreateTask(ctx, client.NewTask{Summary: "plan", Steps: []string{"a", "b?"}, AgentID: &worker.ID,
		ConversationID: conv.UUID}, client.IdempotencyKey("plan-1"))
	if err != nil || task.Status != "Todo" || len(task.Steps) != 2 || task.ConversationID == nil {
		t.Fatalf("create task: %+v %v", task, err)
	}
	again, err := user.CreateTask(ctx, client.NewTask{Summary: "plan", Steps: []string{"a", "b?"}, AgentID: &worker.ID,
		ConversationID: conv.UUID}, client.IdempotencyKey("plan-1"))
	if err != nil || again.ID != task.ID {
		t.Fatalf("idempotent replay: %+v %v", again, err)
	}

	mine, err := agent.ListTasks(ctx, client.ListOptions{AssignedMe: true})
	if err != nil || len(mine.Tasks) != 1 {
		t.Fatalf("agent list: %+v %v", mine, err)
	}
	if _, err := agent.AgentCallback(ctx, task.ID, client.Callback{Status: "Doing", Steps: []client.StepUpdate{{Index: 0, Status: "completed"}}}); err != nil {
		t.Fatal(err)
	}
	waiting, err := agent.AgentCallback(ctx, task.ID, client.Callback{WaitingDetails: "b?"})
	if err != nil || waiting.Status != "Waiting" {
		t.Fatalf("ask: %+v %v", waiting, err)
	}
	if _, err := user.Respond(ctx, task.ID, "yes", waiting.WaitingVersion+1); !client.IsCode(err, "conflict") {
		t.Fatalf("stale respond: %v", err)
	}
	answered, err := user.Respond(ctx, task.ID, "yes", waiting.WaitingVersion)
	if err != nil || answered.Status != "Doing" {
		t.Fatalf("respond: %+v %v", answered, err)
	}

	linked, err := user.ConversationTasks(ctx, p.ID, strconv.FormatInt(conv.ID, 10), client.Page{})
	if err != nil || len(linked) != 1 || linked[0].ID != task.ID {
		t.Fatalf("linked tasks: %+v %v", linked, err)
	}
	if _, err := agent.SendMessage(ctx, "", conv.UUID, "on it"); err != nil {
		t.Fatal(err)
	}
	msgs, err := user.ListMessages(ctx, p.ID, conv.UUID, client.Page{Limit: 10})
	if err != nil || len(msgs) != 2 || msgs[1].AuthorType != "agent" || msgs[1].Content != "on it" {
		t.Fatalf("messages: %+v %v", msgs, err)
	}
	content := bytes.Repeat([]byte("notes\n"), 1000)
	doc, err := user.UploadDocument(ctx, p.ID, conv.UUID, "notes.txt", bytes.NewReader(content))
	if err != nil || doc.Size != int64(len(content)) {
		t.Fatalf("upload: %+v %v", doc, err)
	}
	got, err := agent.DownloadDocument(ctx, doc)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("download: %d bytes, %v", len(got), err)
	}

	// The stream saw it all, in order.
	want := []string{"conversation.created", "message.created", "task.created", "task.updated", "task.updated", "task.updated", "participant.added", "message.created", "document.created"}
	for i, typ := range want {
		e, err := stream.Next()
		if err != nil || e.Type != typ {
			t.Fatalf("event %d: %+v %v, want %s", i, e, err, typ)
		}
	}
	if stream.Last == 0 {
		t.Fatal("stream does not track the last seq")
	}

	n, err := user.DeleteDoneTasks(ctx)
	if err != nil || n != 0 {
		t.Fatalf("delete done: %d %v", n, err)
	}
	if err := user.DeleteTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := user.GetTask(ctx, task.ID); !client.IsCode(err, "not_found") {
		t.Fatalf("deleted task: %v", err)
	}
	bad := client.New(env.URL, client.WithToken("adk_0000000000000000000000000000000000000000"))
	if _, err := bad.ListTasks(ctx, client.ListOptions{}); !client.IsCode(err, "unauthenticated") {
		t.Fatalf("bad token: %v", err)
	}
}
