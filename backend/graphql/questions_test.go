package graphql_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestQuestions: setTaskStatus asks with options or a form and a deadline; respond
// answers with a choice or data; mistakes are invalid_argument naming what is wrong.
func TestQuestions(t *testing.T) {
	env := testenv.Start(t)
	w := env.Token(t, env.Project.ID, "task:read", "task:write")
	var created struct{ ID int64 }
	do(t, env, w, `mutation { createTask(summary: "ship") { id } }`, nil).ok(t).into(t, "createTask", &created)
	id := strconv.FormatInt(created.ID, 10)
	const fields = `id status waitingVersion waitingOptions waitingSchema waitingExpiresAt waitingOnExpiry waitingDefault waitingAsk conversation { content data }`
	type task struct {
		Status                                           string
		WaitingVersion                                   int64
		WaitingOptions                                   []string
		WaitingSchema, WaitingExpiresAt, WaitingOnExpiry *string
		WaitingDefault, WaitingAsk                       *string
		Conversation                                     []struct {
			Content string
			Data    *string
		}
	}
	at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var asked task
	do(t, env, w, `mutation($at: String) { setTaskStatus(id: `+id+`, status: Waiting, waitingDetails: "Ship?", waitingOptions: ["Approve", "Reject"],
		waitingExpiresAt: $at, waitingOnExpiry: "default", waitingDefault: "\"Reject\"", waitingAsk: "dana@example.com") { `+fields+` } }`,
		map[string]any{"at": at}).ok(t).into(t, "setTaskStatus", &asked)
	if strings.Join(asked.WaitingOptions, ",") != "Approve,Reject" || *asked.WaitingExpiresAt != at || *asked.WaitingOnExpiry != "default" ||
		*asked.WaitingDefault != `"Reject"` || *asked.WaitingAsk != "dana@example.com" || asked.WaitingSchema != nil {
		t.Fatalf("asked: %+v", asked)
	}
	for query, want := range map[string]string{
		`mutation { setTaskStatus(id: ` + id + `, status: Waiting, waitingSchema: "{") { id } }`:                                               "waitingSchema must be JSON",
		`mutation { setTaskStatus(id: ` + id + `, status: Waiting, waitingSchema: "{\"type\":\"object\",\"properties\":{\"a\":{}}}") { id } }`: "waiting_schema.properties.a.type",
		`mutation { setTaskStatus(id: ` + id + `, status: Waiting, waitingExpiresAt: "soon") { id } }`:                                         "waitingExpiresAt must be RFC 3339",
		`mutation { respond(id: ` + id + `, choice: "Maybe") { id } }`:                                                                         "not one of the options",
		`mutation { respond(id: ` + id + `, data: "[1]") { id } }`:                                                                             "data must be a JSON object",
	} {
		r := do(t, env, w, query, nil)
		if r.code(t) != "invalid_argument" || !strings.Contains(string(r.raw), want) {
			t.Fatalf("%s: %s, want invalid_argument saying %q", query, r.raw, want)
		}
	}
	var answered task
	do(t, env, w, `mutation { respond(id: `+id+`, choice: "Approve", waitingVersion: 1) { `+fields+` } }`, nil).ok(t).into(t, "respond", &answered)
	if answered.Status != "Doing" || answered.WaitingOptions != nil || answered.Conversation[0].Content != "Approve" || answered.Conversation[0].Data != nil {
		t.Fatalf("answered by a choice: %+v", answered)
	}
	do(t, env, w, `mutation { setTaskStatus(id: `+id+`, status: Waiting, waitingSchema: "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"title\":\"Seats\"}},\"required\":[\"n\"]}") { id } }`, nil).ok(t)
	if r := do(t, env, w, `mutation { respond(id: `+id+`, data: "{}") { id } }`, nil); !strings.Contains(string(r.raw), "n is required") {
		t.Fatalf("a form without its required field: %s", r.raw)
	}
	do(t, env, w, `mutation { respond(id: `+id+`, data: "{\"n\": 3}") { `+fields+` } }`, nil).ok(t).into(t, "respond", &answered)
	if last := answered.Conversation[len(answered.Conversation)-1]; last.Content != "Seats: 3" || last.Data == nil || *last.Data != `{"n":3}` {
		t.Fatalf("answered by a form: %+v", last)
	}
}
