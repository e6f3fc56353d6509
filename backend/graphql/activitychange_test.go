package graphql_test

import (
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// Activity rows of task changes say what changed, from → to (issue 20, item 11).
func TestActivitySaysWhatChanged(t *testing.T) { pgtest.Engines(t, testActivitySaysWhatChanged) }

func testActivitySaysWhatChanged(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	env.Agent(t, pid, "worker")
	admin := env.Token(t, pid, allScopes...)

	var created struct{ ID int64 }
	do(t, env, admin, `mutation { createTask(summary: "Draft", steps: [{title: "a"}, {title: "b"}]) { id } }`, nil).ok(t).into(t, "createTask", &created)
	id := strconv.FormatInt(created.ID, 10)
	agents := []struct{ ID int64 }{}
	do(t, env, admin, `{ agents { id } }`, nil).ok(t).into(t, "agents", &agents)
	aid := strconv.FormatInt(agents[0].ID, 10)
	for _, m := range []string{
		`setTaskStatus(id: ` + id + `, status: Doing) { id }`,
		`assignTask(id: ` + id + `, agentId: ` + aid + `) { id }`,
		`setStepStatus(id: ` + id + `, step: 1, status: completed) { id }`,
		`updateTask(id: ` + id + `, summary: "Final", details: "more") { id }`,
		`setTaskStatus(id: ` + id + `, status: Waiting, waitingDetails: "Which day?") { id }`,
		`respond(id: ` + id + `, response: "Monday") { id }`,
		`commentTask(id: ` + id + `, content: "Thanks") { id }`,
	} {
		do(t, env, admin, `mutation { `+m+` }`, nil).ok(t)
	}

	var rows []struct{ Action, Change string }
	do(t, env, admin, `{ activity(first: 20, objectType: "task", objectId: "`+id+`") { action change } }`, nil).ok(t).into(t, "activity", &rows)
	want := []string{ // newest first
		`comment "Thanks"`,
		`status Waiting → Doing; answered "Monday"`,
		`status Doing → Waiting; asked "Which day?"`,
		`summary "Draft" → "Final"; details edited`,
		`step 2 pending → completed`,
		`agent nobody → worker`,
		`status Backlog → Doing`,
		``, // task.created: nothing before it
	}
	if len(rows) != len(want) {
		t.Fatalf("activity rows: %+v", rows)
	}
	for i, w := range want {
		if rows[i].Change != w {
			t.Errorf("row %d (%s): change %q, want %q", i, rows[i].Action, rows[i].Change, w)
		}
	}
}
