package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestRequestKeys: body keys match field names exactly (encoding/json alone would take
// STATUS for status, so a proxy checking status would see another value than the server
// applies), and every snake_case field is also taken in camelCase, nested objects
// included; both spellings with different values are a 400 naming them.
func TestRequestKeys(t *testing.T) {
	scenarios := []scenario{
		// Exact keys: another case is an unknown field, ignored.
		{name: "STATUS is not status", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":"Done","STATUS":"Failed"}`, status: 200, contains: []string{`"status":"Done"`}},
		{name: "STATUS alone is no status", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"STATUS":"Failed"}`, status: 400, code: "invalid_argument", contains: []string{"status is required"}},
		{name: "Summary is not summary", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"kept","Summary":"other"}`, status: 201, contains: []string{`"summary":"kept"`}},
		{name: "nested Title is not title", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","steps":[{"Title":"x"}]}`, status: 400, code: "invalid_argument", contains: []string{"steps[0].title"}},
		{name: "Agent_Id does not assign", method: "PUT", path: "/api/tasks/{todo}/agent", token: "wo", body: `{"agent_id":{agent},"AGENT_ID":null}`, status: 200, contains: []string{`"agent_name":"worker"`}},

		// camelCase twins.
		{name: "agentId assigns", method: "PUT", path: "/api/tasks/{waiting}/agent", token: "wo", body: `{"agentId":{agent}}`, status: 200, contains: []string{`"agent_name":"worker"`}},
		{name: "agentId and agent_id agree", method: "PUT", path: "/api/tasks/{waiting}/agent", token: "wo", body: `{"agent_id":{agent},"agentId":{agent}}`, status: 200, contains: []string{`"agent_name":"worker"`}},
		{name: "agentId and agent_id differ", method: "PUT", path: "/api/tasks/{waiting}/agent", token: "wo", body: `{"agent_id":{agent},"agentId":null}`, status: 400, code: "invalid_argument", contains: []string{"agent_id and agentId differ"}},
		{name: "create with agentId", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","agentId":{agent},"requiredSkills":[]}`, status: 201, contains: []string{`"status":"Todo"`, `"agent_name":"worker"`}},
		{name: "waitingDetails", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":"Waiting","waitingDetails":"ok?"}`, status: 200, contains: []string{`"waiting_details":"ok?"`}},
		{name: "waitingDetails and waiting_details differ", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":"Waiting","waiting_details":"a?","waitingDetails":"b?"}`, status: 400, code: "invalid_argument", contains: []string{"waiting_details and waitingDetails differ"}},
		{name: "waitingVersion", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{"response":"r","waitingVersion":7}`, status: 409, code: "conflict"},
		{name: "waitingVersion agrees", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{"response":"r","waiting_version":1,"waitingVersion":1}`, status: 200},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { newFixture(t, "sqlite").run(t, sc) })
	}

	// The agent callback: its project (which authenticates the agent) and nested usage.
	f := newFixture(t, "sqlite")
	headers := f.env.AgentHeaders(t, f.project, "worker")
	callback := func(body string) *testenv.Response {
		return f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/agent_callback/%d", f.todo), Header: headers.Clone(), Body: body})
	}
	if r := callback(`{"projectId":"` + f.project + `","waitingDetails":"which?","usage":{"inputTokens":5,"model":"m"}}`); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"waiting_details":"which?"`) {
		t.Errorf("callback in camelCase: %d %s", r.Status, r.Body)
	}
	if r := callback(`{"project_id":"` + f.project + `","usage":{"input_tokens":5,"inputTokens":6,"model":"m"}}`); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "usage.input_tokens and usage.inputTokens differ") {
		t.Errorf("callback with differing nested twins: %d %s", r.Status, r.Body)
	}
}
