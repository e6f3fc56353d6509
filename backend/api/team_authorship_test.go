package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"slices"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestTeamEveryActIsTheirs ("answered by Dana"): what a signed-in person does through
// their session is theirs: an answer (REST and GraphQL) is hers in the task's thread and
// in the activity trail, and so are the tasks, conversations, messages and tokens she
// makes.
func TestTeamEveryActIsTheirs(t *testing.T) { pgtest.Engines(t, testTeamEveryActIsTheirs) }

func testTeamEveryActIsTheirs(t *testing.T, engine string) {
	const dana = "Dana Test"
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleAdmin) // admin: she may make tokens
	cookie := tm.signIn(t, tm.browser(t), "dana")
	csrf := tm.csrf(t, cookie)
	ctx, owner := context.Background(), auth.Owner(tm.env.Project.ID)
	waiting := func() int64 {
		task, err := tm.env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "which database?"}, "")
		if err != nil {
			t.Fatal(err)
		}
		details := "SQLite or PostgreSQL?"
		if _, err := tm.env.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusWaiting, &details, nil, nil); err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	do := func(method, path, body string) *testenv.Response {
		t.Helper()
		r := tm.env.Do(t, withCookie(testenv.Request{Method: method, Path: path, Body: body}, cookie, csrf))
		if r.Status/100 != 2 || strings.Contains(string(r.Body), `"errors"`) {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	lastEntry := func(task model.Task) model.TaskMessage {
		if len(task.Conversation) == 0 {
			t.Fatalf("task %d has no conversation", task.ID)
		}
		return task.Conversation[len(task.Conversation)-1]
	}

	// Answers, by REST and by GraphQL: the thread says who answered.
	restTask := waiting()
	var answered model.Task
	do("POST", fmt.Sprintf("/api/tasks/%d/respond", restTask), `{"response":"SQLite"}`).JSON(t, &answered)
	if e := lastEntry(answered); e.Role != model.RoleUser || e.Content != "SQLite" || e.Author != dana {
		t.Errorf("REST answer in the thread: %+v, want by %s", e, dana)
	}
	gqlTask := waiting()
	var out struct {
		Data struct {
			Respond struct {
				Conversation []struct{ Role, Content, Author string }
			}
		}
	}
	r := do("POST", "/graphql", fmt.Sprintf(`{"query":"mutation { respond(id: %d, response: \"PostgreSQL\") { conversation { role content author } } }"}`, gqlTask))
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	if c := out.Data.Respond.Conversation; len(c) == 0 || c[len(c)-1].Author != dana || c[len(c)-1].Content != "PostgreSQL" {
		t.Errorf("GraphQL answer in the thread: %s, want by %s", r.Body, dana)
	}
	// Read back, by REST: the author is stored, not only returned.
	var got model.Task
	tm.env.Do(t, withCookie(testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/%d", gqlTask)}, cookie, "")).JSON(t, &got)
	if e := lastEntry(got); e.Author != dana {
		t.Errorf("GraphQL answer read back: %+v, want by %s", e, dana)
	}

	// What she makes.
	var created model.Task
	do("POST", "/api/tasks", `{"summary":"by Dana"}`).JSON(t, &created)
	var conv model.Conversation
	do("POST", "/api/projects/"+tm.env.Project.ID+"/conversations", `{"message":"hello team"}`).JSON(t, &conv)
	var msg model.Message
	do("POST", fmt.Sprintf("/api/projects/%s/conversations/%d/messages", tm.env.Project.ID, conv.ID), `{"message":"a second word"}`).JSON(t, &msg)
	if msg.Author != dana || msg.AuthorType != "user" {
		t.Errorf("message: author %q (%s), want %s (user)", msg.Author, msg.AuthorType, dana)
	}
	do("POST", "/graphql", `{"query":"mutation { sendMessage(conversationId: \"`+fmt.Sprint(conv.ID)+`\", message: \"by GraphQL\") { id } }"}`)
	do("POST", "/graphql", `{"query":"mutation { createPlatformToken(name: \"dana's script\", scopes: [\"task:read\"]) { token } }"}`)

	// The activity trail: every one of those acts is Dana's.
	acts, err := tm.env.Service.Activity(ctx, owner, service.ActivityInput{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, a := range acts {
		if a.ActorKind == "user" && a.Actor == dana {
			count[a.Action]++
		}
	}
	for action, want := range map[string]int{
		service.EventTaskUpdated:         2, // the two answers
		service.EventTaskCreated:         1,
		service.EventConversationCreated: 1,
		service.EventMessageCreated:      3, // the conversation's first message, and two more
		service.EventTokenCreated:        1,
	} {
		if count[action] < want {
			t.Errorf("activity: %d %s by %s, want %d; trail: %v", count[action], action, dana, want, trail(acts))
		}
	}
	// Her messages are hers in the conversation too.
	msgs, _, err := tm.env.Service.ListMessages(ctx, owner, fmt.Sprint(conv.ID), service.PageInput{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || slices.ContainsFunc(msgs, func(m model.Message) bool { return m.Author != dana }) {
		t.Errorf("conversation messages: %+v, want 3 by %s", msgs, dana)
	}
}

func trail(acts []model.Activity) []string {
	var out []string
	for _, a := range acts {
		out = append(out, a.Action+" by "+a.ActorKind+" "+a.Actor)
	}
	return out
}
