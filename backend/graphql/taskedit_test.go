package graphql_test

import (
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// updateTask changes a task's summary, details and step titles with createTask's rules;
// statuses of the steps already there stay, status and agent do not change.
func TestUpdateTask(t *testing.T) {
	env := testenv.Start(t)
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
