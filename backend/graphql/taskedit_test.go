package graphql_test

import (
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// updateTask changes a task's summary, details and step titles with createTask's rules;
// statuses of the steps already there stay, status and agent do not change.
func TestUpdateTask(t *testing.T) { pgtest.Engines(t, testUpdateTask) }

func testUpdateTask(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	w := env.Token(t, pid, auth.TaskRead, auth.TaskWrite)
	ro := env.Token(t, pid, auth.TaskRead)

	var created task
	do(t, env, w, `mutation { createTask(summary: "Draft", steps: [{title: "a"}, {title: "b"}]) { `+taskFields+` } }`, nil).
		ok(t).into(t, "createTask", &created)
	id := strconv.FormatInt(created.ID, 10)
	do(t, env, w, `mutation { setStepStatus(id: `+id+`, step: 0, status: completed) { id } }`, nil).ok(t)

	var edited task
	do(t, env, w, `mutation { updateTask(id: `+id+`, summary: "Final", details: "now with details",
		steps: [{title: "A"}, {title: "B"}, {title: "C"}]) { `+taskFields+` } }`, nil).ok(t).into(t, "updateTask", &edited)
	if edited.Summary != "Final" || edited.Details != "now with details" || edited.Status != "Backlog" || len(edited.Steps) != 3 ||
		edited.Steps[0].Title != "A" || edited.Steps[0].Status != "completed" || edited.Steps[2].Status != "pending" {
		t.Fatalf("updateTask = %+v", edited)
	}
	// Only what is given changes.
	do(t, env, w, `mutation { updateTask(id: `+id+`, details: "") { `+taskFields+` } }`, nil).ok(t).into(t, "updateTask", &edited)
	if edited.Summary != "Final" || edited.Details != "" || len(edited.Steps) != 3 {
		t.Fatalf("details only = %+v", edited)
	}

	for name, q := range map[string]string{
		"nothing":       `mutation { updateTask(id: ` + id + `) { id } }`,
		"blank summary": `mutation { updateTask(id: ` + id + `, summary: " ") { id } }`,
		"empty step":    `mutation { updateTask(id: ` + id + `, steps: [{title: ""}]) { id } }`,
	} {
		if c := do(t, env, w, q, nil).code(t); c != "invalid_argument" {
			t.Errorf("%s: code %q, want invalid_argument", name, c)
		}
	}
	if c := do(t, env, ro, `mutation { updateTask(id: `+id+`, summary: "x") { id } }`, nil).code(t); c != "forbidden" {
		t.Errorf("read-only token: code %q, want forbidden", c)
	}
	if c := do(t, env, w, `mutation { updateTask(id: 999999, summary: "x") { id } }`, nil).code(t); c != "not_found" {
		t.Errorf("unknown task: code %q, want not_found", c)
	}
}

// commentTask adds an entry to a task's conversation in any status (here Done), with
// its author; nothing else changes. A blank comment and a read-only token are refused.
func TestCommentTask(t *testing.T) { pgtest.Engines(t, testCommentTask) }

func testCommentTask(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	w := env.Token(t, pid, auth.TaskRead, auth.TaskWrite)
	ro := env.Token(t, pid, auth.TaskRead)

	var created task
	do(t, env, w, `mutation { createTask(summary: "Done already") { `+taskFields+` } }`, nil).ok(t).into(t, "createTask", &created)
	id := strconv.FormatInt(created.ID, 10)
	do(t, env, w, `mutation { setTaskStatus(id: `+id+`, status: Done) { id } }`, nil).ok(t)

	var got struct {
		Status       string
		Conversation []struct{ Role, Content, Author string }
	}
	do(t, env, w, `mutation { commentTask(id: `+id+`, content: "Shipped on **Monday**") { status conversation { role content author } } }`, nil).
		ok(t).into(t, "commentTask", &got)
	if got.Status != "Done" || len(got.Conversation) != 1 || got.Conversation[0].Content != "Shipped on **Monday**" ||
		got.Conversation[0].Role != "user" || got.Conversation[0].Author == "" {
		t.Fatalf("commentTask = %+v", got)
	}
	if c := do(t, env, w, `mutation { commentTask(id: `+id+`, content: " ") { id } }`, nil).code(t); c != "invalid_argument" {
		t.Errorf("blank comment: code %q, want invalid_argument", c)
	}
	if c := do(t, env, ro, `mutation { commentTask(id: `+id+`, content: "x") { id } }`, nil).code(t); c != "forbidden" {
		t.Errorf("read-only token: code %q, want forbidden", c)
	}
}
