package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// fixture is a server with a project, an agent, tokens of each kind and a few tasks.
type fixture struct {
	env                 *testenv.Env
	project             string
	rw, ro, wo, msgOnly string // tokens: task read+write, read only, write only, messaging only
	agent               *model.Agent
	waiting             int64 // a task in Waiting (waiting_version 1)
	todo                int64 // a Todo task with three steps, assigned to agent
	other               int64 // a task of another project
	otherToken          string
	otherProject        string
}

func newFixture(t *testing.T, engine string) *fixture {
	t.Helper()
	env := testenv.StartOn(t, engine)
	f := &fixture{env: env, project: env.Project.ID}
	f.rw = env.Token(t, f.project, "task:read", "task:write")
	f.ro = env.Token(t, f.project, "task:read")
	f.wo = env.Token(t, f.project, "task:write")
	f.msgOnly = env.Token(t, f.project, "messaging:read", "messaging:write")
	f.agent = env.Agent(t, f.project, "worker")
	f.todo = f.create(t, f.rw, fmt.Sprintf(`{"summary":"build","steps":[{"title":"a"},{"title":"b?"},{"title":"c"}],"agent_id":%d}`, f.agent.ID)).ID
	f.waiting = f.create(t, f.rw, `{"summary":"ask"}`).ID
	f.put(t, fmt.Sprintf("/api/tasks/%d/status", f.waiting), `{"status":"Waiting","waiting_details":"which?"}`, http.StatusOK)
	other := env.NewProject(t, "other")
	f.otherProject = other.ID
	f.otherToken = env.Token(t, other.ID, "task:read", "task:write")
	f.other = f.create(t, f.otherToken, `{"summary":"secret"}`).ID
	return f
}

func (f *fixture) create(t *testing.T, token, body string) model.Task {
	t.Helper()
	r := f.env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: token, Body: body})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var task model.Task
	r.JSON(t, &task)
	return task
}

func (f *fixture) put(t *testing.T, path, body string, want int) *testenv.Response {
	t.Helper()
	r := f.env.Do(t, testenv.Request{Method: "PUT", Path: path, Token: f.rw, Body: body})
	if r.Status != want {
		t.Fatalf("PUT %s: %d %s, want %d", path, r.Status, r.Body, want)
	}
	return r
}

// run sends a scenario. Path placeholders: {todo} {waiting} {other} (a task of another
// project) {project} {otherProject} {agent}. Tokens: rw, ro, wo, msg, other.
func (f *fixture) run(t *testing.T, sc scenario) *testenv.Response {
	t.Helper()
	fill := strings.NewReplacer("{todo}", fmt.Sprint(f.todo), "{waiting}", fmt.Sprint(f.waiting), "{other}", fmt.Sprint(f.other),
		"{project}", f.project, "{otherProject}", f.otherProject, "{agent}", fmt.Sprint(f.agent.ID))
	path := fill.Replace(sc.path)
	req := testenv.Request{Method: sc.method, Path: path, Header: http.Header{}}
	if sc.body != "" {
		req.Body = fill.Replace(sc.body)
	}
	switch sc.token {
	case "rw":
		req.Token = f.rw
	case "ro":
		req.Token = f.ro
	case "wo":
		req.Token = f.wo
	case "msg":
		req.Token = f.msgOnly
	case "other":
		req.Token = f.otherToken
	case "none", "":
	default:
		req.Header.Set("Authorization", strings.TrimPrefix(sc.token, "raw:"))
	}
	return sc.send(t, f.env, req, fill)
}

// TestTaskEndpoints covers every Tasks endpoint and every error row of the contract.
// Each scenario runs on a fresh fixture, so that mutations do not leak between rows.
func TestTaskEndpoints(t *testing.T) { pgtest.Engines(t, testTaskEndpoints) }

func testTaskEndpoints(t *testing.T, engine string) {
	scenarios := []scenario{
		// GET /api/tasks
		{name: "list", method: "GET", path: "/api/tasks", token: "rw", status: 200, contains: []string{`"summary":"build"`, `"summary":"ask"`}},
		{name: "list by status", method: "GET", path: "/api/tasks?status=Waiting", token: "ro", status: 200, contains: []string{`"summary":"ask"`}},
		{name: "list by agent", method: "GET", path: "/api/tasks?agent_id={agent}", token: "ro", status: 200, contains: []string{`"agent_name":"worker"`}},
		{name: "list bad status", method: "GET", path: "/api/tasks?status=doing", token: "ro", status: 400, code: "invalid_argument", contains: []string{"Backlog"}},
		{name: "list empty status", method: "GET", path: "/api/tasks?status=", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list bad limit", method: "GET", path: "/api/tasks?limit=abc", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list zero limit", method: "GET", path: "/api/tasks?limit=0", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list huge limit", method: "GET", path: "/api/tasks?limit=100000", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list bad after_id", method: "GET", path: "/api/tasks?after_id=x", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list negative after_id", method: "GET", path: "/api/tasks?after_id=-1", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list bad agent_id", method: "GET", path: "/api/tasks?agent_id=1.5", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list assigned=me for a user", method: "GET", path: "/api/tasks?assigned=me", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list no token", method: "GET", path: "/api/tasks", token: "none", status: 401, code: "unauthenticated"},
		{name: "list wrong token", method: "GET", path: "/api/tasks", token: "raw:Bearer adk_0000000000000000000000000000000000000000", status: 401, code: "unauthenticated"},
		{name: "list junk token", method: "GET", path: "/api/tasks", token: "raw:Bearer nope", status: 401, code: "unauthenticated"},
		{name: "list Bearer prefix omitted", method: "GET", path: "/api/tasks", token: "raw:adk_0000000000000000000000000000000000000000", status: 401, code: "unauthenticated"},
		{name: "list basic auth", method: "GET", path: "/api/tasks", token: "raw:Basic dXNlcjpwYXNz", status: 401, code: "unauthenticated"},
		{name: "list without task:read", method: "GET", path: "/api/tasks", token: "wo", status: 403, code: "forbidden", contains: []string{"task:read"}},
		{name: "list messaging token", method: "GET", path: "/api/tasks", token: "msg", status: 403, code: "forbidden"},

		// GET /api/tasks/{id}
		{name: "get", method: "GET", path: "/api/tasks/{todo}", token: "ro", status: 200, contains: []string{`"conversation":[]`, `"source":"user"`, `"taskType":"standard"`, `"waiting_version":0`}},
		{name: "get waiting", method: "GET", path: "/api/tasks/{waiting}", token: "ro", status: 200, contains: []string{`"is_waiting":true`, `"waiting_details":"which?"`}},
		{name: "get unknown", method: "GET", path: "/api/tasks/999999", token: "ro", status: 404, code: "not_found"},
		{name: "get other project", method: "GET", path: "/api/tasks/{other}", token: "ro", status: 404, code: "not_found"},
		{name: "get non-integer id", method: "GET", path: "/api/tasks/abc", token: "ro", status: 400, code: "invalid_argument"},
		{name: "get zero id", method: "GET", path: "/api/tasks/0", token: "ro", status: 400, code: "invalid_argument"},
		{name: "get overflowing id", method: "GET", path: "/api/tasks/99999999999999999999999", token: "ro", status: 400, code: "invalid_argument"},
		{name: "get without scope", method: "GET", path: "/api/tasks/{todo}", token: "wo", status: 403, code: "forbidden"},
		{name: "get no token", method: "GET", path: "/api/tasks/{todo}", token: "none", status: 401, code: "unauthenticated"},

		// POST /api/tasks
		{name: "create backlog", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","details":"d","steps":[{"title":"one"}]}`, status: 201, contains: []string{`"status":"Backlog"`, `"agent_id":null`, `"agent_name":""`, `"status":"pending"`}},
		{name: "create with agent is Todo", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","agent_id":{agent}}`, status: 201, contains: []string{`"status":"Todo"`, `"agent_name":"worker"`}},
		{name: "create unknown fields ignored", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","colour":"blue","steps":[{"title":"x","extra":1}]}`, status: 201},
		{name: "create taskType", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","taskType":"review"}`, status: 201, contains: []string{`"taskType":"review"`}},
		{name: "create empty summary", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"  "}`, status: 400, code: "invalid_argument", contains: []string{"summary"}},
		{name: "create missing summary", method: "POST", path: "/api/tasks", token: "wo", body: `{"details":"d"}`, status: 400, code: "invalid_argument", contains: []string{"summary"}},
		{name: "create summary wrong type", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":5}`, status: 400, code: "invalid_argument", contains: []string{"summary"}},
		{name: "create steps wrong type", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","steps":"a"}`, status: 400, code: "invalid_argument"},
		{name: "create step without title", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","steps":[{}]}`, status: 400, code: "invalid_argument", contains: []string{"steps[0].title"}},
		{name: "create agent_id wrong type", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","agent_id":"x"}`, status: 400, code: "invalid_argument"},
		{name: "create agent of no project", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s","agent_id":424242}`, status: 400, code: "invalid_argument"},
		{name: "create malformed JSON", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":`, status: 400, code: "invalid_argument"},
		{name: "create not an object", method: "POST", path: "/api/tasks", token: "wo", body: `[1,2]`, status: 400, code: "invalid_argument"},
		{name: "create trailing data", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s"} {}`, status: 400, code: "invalid_argument"},
		{name: "create empty body", method: "POST", path: "/api/tasks", token: "wo", body: ``, status: 400, code: "invalid_argument"},
		{name: "create huge body", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"` + strings.Repeat("x", 1<<20) + `"}`, status: 413, code: "payload_too_large"},
		{name: "create long summary", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"` + strings.Repeat("x", 1001) + `"}`, status: 400, code: "invalid_argument"},
		{name: "create bad idempotency key", method: "POST", path: "/api/tasks", token: "wo", body: `{"summary":"s"}`, header: map[string]string{"Idempotency-Key": "has space"}, status: 400, code: "invalid_argument"},
		{name: "create read-only token", method: "POST", path: "/api/tasks", token: "ro", body: `{"summary":"s"}`, status: 403, code: "forbidden", contains: []string{"task:write"}},
		{name: "create no token", method: "POST", path: "/api/tasks", token: "none", body: `{"summary":"s"}`, status: 401, code: "unauthenticated"},

		// PUT /api/tasks/{id}/status
		{name: "status", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":"Doing"}`, status: 200, contains: []string{`"status":"Doing"`, `"is_active":true`}},
		{name: "status any to any", method: "PUT", path: "/api/tasks/{waiting}/status", token: "wo", body: `{"status":"Backlog"}`, status: 200, contains: []string{`"status":"Backlog"`, `"waiting_details":null`}},
		{name: "status waiting camelCase details", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":"Waiting","waitingDetails":"ok?"}`, status: 200, contains: []string{`"waiting_details":"ok?"`, `"waiting_version":1`}},
		{name: "status invalid enum", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":"done"}`, status: 400, code: "invalid_argument"},
		{name: "status missing", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{}`, status: 400, code: "invalid_argument"},
		{name: "status wrong type", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":3}`, status: 400, code: "invalid_argument"},
		{name: "status malformed", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `status=Done`, status: 400, code: "invalid_argument"},
		{name: "status unknown task", method: "PUT", path: "/api/tasks/999999/status", token: "wo", body: `{"status":"Done"}`, status: 404, code: "not_found"},
		{name: "status other project", method: "PUT", path: "/api/tasks/{other}/status", token: "wo", body: `{"status":"Done"}`, status: 404, code: "not_found"},
		{name: "status non-integer id", method: "PUT", path: "/api/tasks/x/status", token: "wo", body: `{"status":"Done"}`, status: 400, code: "invalid_argument"},
		{name: "status read-only with a bad enum", method: "PUT", path: "/api/tasks/{todo}/status", token: "ro", body: `{"status":"nope"}`, status: 403, code: "forbidden"},
		{name: "step read-only with a bad enum", method: "PUT", path: "/api/tasks/{todo}/steps/0/status", token: "ro", body: `{"status":"nope"}`, status: 403, code: "forbidden"},
		{name: "status read-only", method: "PUT", path: "/api/tasks/{todo}/status", token: "ro", body: `{"status":"Done"}`, status: 403, code: "forbidden"},
		{name: "status huge body", method: "PUT", path: "/api/tasks/{todo}/status", token: "wo", body: `{"status":"Done","x":"` + strings.Repeat("y", 1<<20) + `"}`, status: 413, code: "payload_too_large"},

		// PUT /api/tasks/{id}/agent
		{name: "assign", method: "PUT", path: "/api/tasks/{waiting}/agent", token: "wo", body: `{"agent_id":{agent}}`, status: 200, contains: []string{`"agent_name":"worker"`, `"status":"Waiting"`}},
		{name: "unassign", method: "PUT", path: "/api/tasks/{todo}/agent", token: "wo", body: `{"agent_id":null}`, status: 200, contains: []string{`"agent_id":null`, `"agent_name":""`, `"status":"Todo"`}},
		{name: "assign unknown agent", method: "PUT", path: "/api/tasks/{todo}/agent", token: "wo", body: `{"agent_id":999}`, status: 400, code: "invalid_argument"},
		{name: "assign wrong type", method: "PUT", path: "/api/tasks/{todo}/agent", token: "wo", body: `{"agent_id":"worker"}`, status: 400, code: "invalid_argument"},
		{name: "assign other project", method: "PUT", path: "/api/tasks/{other}/agent", token: "wo", body: `{"agent_id":null}`, status: 404, code: "not_found"},
		{name: "assign read-only", method: "PUT", path: "/api/tasks/{todo}/agent", token: "ro", body: `{"agent_id":null}`, status: 403, code: "forbidden"},

		// PUT /api/tasks/{id}/steps/{stepNum}/status
		{name: "step", method: "PUT", path: "/api/tasks/{todo}/steps/0/status", token: "wo", body: `{"status":"completed"}`, status: 200, contains: []string{`"current_step_num":1`}},
		{name: "step task vocabulary", method: "PUT", path: "/api/tasks/{todo}/steps/1/status", token: "wo", body: `{"status":"Doing"}`, status: 200, contains: []string{`"status":"in_progress"`}},
		{name: "step skipped", method: "PUT", path: "/api/tasks/{todo}/steps/2/status", token: "wo", body: `{"status":"skipped"}`, status: 200, contains: []string{`"status":"skipped"`}},
		{name: "step invalid status", method: "PUT", path: "/api/tasks/{todo}/steps/0/status", token: "wo", body: `{"status":"finished"}`, status: 400, code: "invalid_argument"},
		{name: "step missing status", method: "PUT", path: "/api/tasks/{todo}/steps/0/status", token: "wo", body: `{}`, status: 400, code: "invalid_argument"},
		{name: "step negative", method: "PUT", path: "/api/tasks/{todo}/steps/-1/status", token: "wo", body: `{"status":"completed"}`, status: 400, code: "invalid_argument"},
		{name: "step non-integer", method: "PUT", path: "/api/tasks/{todo}/steps/first/status", token: "wo", body: `{"status":"completed"}`, status: 400, code: "invalid_argument"},
		{name: "step out of range", method: "PUT", path: "/api/tasks/{todo}/steps/3/status", token: "wo", body: `{"status":"completed"}`, status: 404, code: "not_found", contains: []string{"3 steps"}},
		{name: "step huge number", method: "PUT", path: "/api/tasks/{todo}/steps/99999999999999999999/status", token: "wo", body: `{"status":"completed"}`, status: 400, code: "invalid_argument"},
		{name: "step other project", method: "PUT", path: "/api/tasks/{other}/steps/0/status", token: "wo", body: `{"status":"completed"}`, status: 404, code: "not_found"},
		{name: "step read-only", method: "PUT", path: "/api/tasks/{todo}/steps/0/status", token: "ro", body: `{"status":"completed"}`, status: 403, code: "forbidden"},

		// POST /api/tasks/{id}/respond
		{name: "respond", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{"response":"the blue one"}`, status: 200, contains: []string{`"status":"Doing"`, `"role":"user","content":"the blue one"`, `"waiting_details":null`}},
		{name: "respond with version", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{"response":"x","waiting_version":1}`, status: 200},
		{name: "respond stale version", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{"response":"x","waiting_version":0}`, status: 409, code: "conflict", contains: []string{"waiting_version"}},
		{name: "respond not waiting", method: "POST", path: "/api/tasks/{todo}/respond", token: "wo", body: `{"response":"x"}`, status: 409, code: "conflict", contains: []string{"not waiting"}},
		{name: "respond empty", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{"response":""}`, status: 400, code: "invalid_argument"},
		{name: "respond missing", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{}`, status: 400, code: "invalid_argument"},
		{name: "respond version wrong type", method: "POST", path: "/api/tasks/{waiting}/respond", token: "wo", body: `{"response":"x","waiting_version":"1"}`, status: 400, code: "invalid_argument"},
		{name: "respond unknown", method: "POST", path: "/api/tasks/999999/respond", token: "wo", body: `{"response":"x"}`, status: 404, code: "not_found"},
		{name: "respond other project", method: "POST", path: "/api/tasks/{other}/respond", token: "wo", body: `{"response":"x"}`, status: 404, code: "not_found"},
		{name: "respond read-only", method: "POST", path: "/api/tasks/{waiting}/respond", token: "ro", body: `{"response":"x"}`, status: 403, code: "forbidden"},

		// DELETE /api/tasks/{id}
		{name: "delete", method: "DELETE", path: "/api/tasks/{todo}", token: "wo", status: 204},
		{name: "delete unknown", method: "DELETE", path: "/api/tasks/999999", token: "wo", status: 404, code: "not_found"},
		{name: "delete other project", method: "DELETE", path: "/api/tasks/{other}", token: "wo", status: 404, code: "not_found"},
		{name: "delete non-integer", method: "DELETE", path: "/api/tasks/1e3", token: "wo", status: 400, code: "invalid_argument"},
		{name: "delete read-only", method: "DELETE", path: "/api/tasks/{todo}", token: "ro", status: 403, code: "forbidden"},
		{name: "delete no token", method: "DELETE", path: "/api/tasks/{todo}", token: "none", status: 401, code: "unauthenticated"},

		// DELETE /api/tasks/done
		{name: "delete done", method: "DELETE", path: "/api/tasks/done", token: "wo", status: 200, contains: []string{`{"deleted":0}`}},
		{name: "delete done read-only", method: "DELETE", path: "/api/tasks/done", token: "ro", status: 403, code: "forbidden"},

		// Project-scoped mirrors
		{name: "project list", method: "GET", path: "/api/projects/{project}/tasks", token: "ro", status: 200, contains: []string{`"summary":"build"`}},
		{name: "project get", method: "GET", path: "/api/projects/{project}/tasks/{todo}", token: "ro", status: 200, contains: []string{`"summary":"build"`}},
		{name: "project list other project", method: "GET", path: "/api/projects/{otherProject}/tasks", token: "ro", status: 404, code: "not_found"},
		{name: "project get other project", method: "GET", path: "/api/projects/{otherProject}/tasks/{other}", token: "ro", status: 404, code: "not_found"},
		{name: "project get task of other project", method: "GET", path: "/api/projects/{project}/tasks/{other}", token: "ro", status: 404, code: "not_found"},
		{name: "project list no token", method: "GET", path: "/api/projects/{project}/tasks", token: "none", status: 401, code: "unauthenticated"},

		// The rest of the surface
		{name: "unknown api path", method: "GET", path: "/api/nothing", token: "rw", status: 404, code: "not_found"},
		{name: "unknown method", method: "POST", path: "/api/tasks/{todo}", token: "rw", status: 405, code: "method_not_allowed"},
		{name: "health", method: "GET", path: "/healthz", status: 200, contains: []string{`"ok"`}},
		{name: "openapi", method: "GET", path: "/api/openapi.json", status: 200, contains: []string{`"openapi"`}},
	}
	shared := newFixture(t, engine) // reads share one server; each mutation gets a fresh one
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			f := shared
			if sc.method != "GET" {
				f = newFixture(t, engine)
			}
			f.run(t, sc)
		})
	}
}
