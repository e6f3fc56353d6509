package api_test

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestAgentAuthentication follows the spec's validation order on a project path.
func TestAgentAuthentication(t *testing.T) { pgtest.Engines(t, testAgentAuthentication) }

func testAgentAuthentication(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	a := env.Project
	b := env.NewProject(t, "b")
	env.Agent(t, a.ID, "worker")
	env.Agent(t, b.ID, "other-worker")
	secretA := mustSecret(t, env, a.ID)
	secretB := mustSecret(t, env, b.ID)

	cases := []struct {
		name          string
		path          string
		digest, name2 string
		status        int
		mention       string
	}{
		{"correct hash", "/api/projects/" + a.ID + "/tasks", sha1hex(a.ID + secretA), "worker", 200, ""},
		{"uppercase hex accepted", "/api/projects/" + a.ID + "/tasks", strings.ToUpper(sha1hex(a.ID + secretA)), "worker", 200, ""},
		{"hash of the namespace", "/api/projects/" + a.ID + "/tasks", sha1hex(a.Namespace + secretA), "worker", 401, "X-Task-Authorization"},
		{"wrong secret", "/api/projects/" + a.ID + "/tasks", sha1hex(a.ID + "not-the-secret"), "worker", 401, "X-Task-Authorization"},
		{"unknown agent", "/api/projects/" + a.ID + "/tasks", sha1hex(a.ID + secretA), "ghost", 401, "X-Agent-Name"},
		{"missing agent name", "/api/projects/" + a.ID + "/tasks", sha1hex(a.ID + secretA), "", 401, "X-Agent-Name"},
		{"project A's agent on B's path", "/api/projects/" + b.ID + "/tasks", sha1hex(a.ID + secretA), "worker", 401, ""},
		{"project A's hash with B's agent name", "/api/projects/" + a.ID + "/tasks", sha1hex(a.ID + secretA), "other-worker", 401, "X-Agent-Name"},
		{"B's own agent on B's path", "/api/projects/" + b.ID + "/tasks", sha1hex(b.ID + secretB), "other-worker", 200, ""},
		{"unknown project", "/api/projects/prj_nope/tasks", sha1hex("prj_nope" + secretA), "worker", 401, ""},
		{"agent headers on a Bearer-only route", "/api/tasks", sha1hex(a.ID + secretA), "worker", 401, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			h.Set("X-Task-Authorization", c.digest)
			h.Set("X-Task-Namespace", "whatever-the-namespace")
			if c.name2 != "" {
				h.Set("X-Agent-Name", c.name2)
			}
			r := env.Do(t, testenv.Request{Method: "GET", Path: c.path, Header: h})
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.mention != "" && !strings.Contains(string(r.Body), c.mention) {
				t.Fatalf("401 does not say which header was wrong: %s", r.Body)
			}
			for _, secret := range []string{secretA, secretB, sha1hex(a.ID + secretA)} {
				if r.Status != 200 && strings.Contains(string(r.Body), secret) {
					t.Fatal("an error reveals a secret or the expected digest")
				}
			}
		})
	}
}

func mustSecret(t *testing.T, env *testenv.Env, projectID string) string {
	t.Helper()
	p, err := env.Service.Project(t.Context(), ownerOf(projectID), projectID)
	if err != nil {
		t.Fatal(err)
	}
	return p.TokenSecret
}

// TestAgentCallback: the callback is applied atomically and only by the assigned agent.
func TestAgentCallback(t *testing.T) { pgtest.Engines(t, testAgentCallback) }

func testAgentCallback(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	a := env.Project.ID
	worker := env.Agent(t, a, "worker")
	env.Agent(t, a, "bystander")
	user := env.Token(t, a, "task:read", "task:write")
	var task model.Task
	env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: user,
		Body: fmt.Sprintf(`{"summary":"s","steps":[{"title":"a"},{"title":"b?"}],"agent_id":%d}`, worker.ID)}).JSON(t, &task)
	path := fmt.Sprintf("/api/agent_callback/%d", task.ID)
	as := func(name string) http.Header { return env.AgentHeaders(t, a, name) }

	b := env.NewProject(t, "b")
	env.Agent(t, b.ID, "worker")
	var bTask model.Task
	bUser := env.Token(t, b.ID, "task:read", "task:write")
	env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: bUser, Body: `{"summary":"theirs"}`}).JSON(t, &bTask)

	cases := []struct {
		name   string
		path   string
		header http.Header
		token  string
		body   string
		status int
		check  func(t *testing.T, got model.Task)
	}{
		{name: "not assigned", path: path, header: as("bystander"), body: `{"project_id":"` + a + `","status":"Doing"}`, status: 403},
		{name: "body project_id of another project", path: path, header: env.AgentHeaders(t, b.ID, "worker"), body: `{"project_id":"` + b.ID + `","status":"Doing"}`, status: 404},
		{name: "hash of one project, project_id of another", path: path, header: as("worker"), body: `{"project_id":"` + b.ID + `","status":"Doing"}`, status: 401},
		{name: "missing project_id", path: path, header: as("worker"), body: `{"status":"Doing"}`, status: 400},
		{name: "no credentials", path: path, body: `{"project_id":"` + a + `"}`, status: 401},
		{name: "bearer token", path: path, token: user, body: `{"project_id":"` + a + `"}`, status: 403},
		{name: "wrong bearer token", path: path, token: "adk_0000000000000000000000000000000000000000", body: `{"project_id":"` + a + `"}`, status: 401},
		{name: "no credentials, malformed body", path: path, body: `{`, status: 401},
		{name: "unknown task", path: "/api/agent_callback/99999", header: as("worker"), body: `{"project_id":"` + a + `"}`, status: 404},
		{name: "another project's task", path: fmt.Sprintf("/api/agent_callback/%d", bTask.ID), header: as("worker"), body: `{"project_id":"` + a + `","status":"Done"}`, status: 404},
		{name: "bad status", path: path, header: as("worker"), body: `{"project_id":"` + a + `","status":"finished"}`, status: 400},
		{name: "step past the end leaves everything unchanged", path: path, header: as("worker"),
			body: `{"project_id":"` + a + `","status":"Doing","steps":[{"index":0,"status":"completed"},{"index":5,"status":"completed"}],"message":"half"}`, status: 400},
		{name: "progress", path: path, header: as("worker"),
			body: `{"project_id":"` + a + `","status":"Doing","steps":[{"index":0,"status":"completed"},{"index":1,"status":"in_progress"}],"message":"working"}`, status: 200,
			check: func(t *testing.T, got model.Task) {
				if got.Status != "Doing" || got.Steps[0].Status != "completed" || got.Steps[1].Status != "in_progress" || got.CurrentStepNum != 1 ||
					len(got.Conversation) != 1 || got.Conversation[0].Role != "assistant" || got.Conversation[0].Content != "working" {
					t.Fatalf("after progress: %+v", got)
				}
			}},
		{name: "waiting_details alone means Waiting", path: path, header: as("worker"),
			body: `{"project_id":"` + a + `","waitingDetails":"b?"}`, status: 200,
			check: func(t *testing.T, got model.Task) {
				if got.Status != "Waiting" || got.WaitingDetails == nil || *got.WaitingDetails != "b?" || got.WaitingVersion != 1 {
					t.Fatalf("after asking: %+v", got)
				}
			}},
	}
	// A task as GET answers it, whole: a refused callback must leave it byte for byte.
	read := func(id int64, token string) string {
		r := env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/%d", id), Token: token})
		if r.Status != http.StatusOK {
			t.Fatalf("get task %d: %d %s", id, r.Status, r.Body)
		}
		return string(r.Body)
	}
	for _, c := range cases {
		before, beforeB := read(task.ID, user), read(bTask.ID, bUser)
		t.Run(c.name, func(t *testing.T) {
			r := env.Do(t, testenv.Request{Method: "POST", Path: c.path, Header: c.header, Token: c.token, Body: c.body})
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.check != nil {
				var got model.Task
				r.JSON(t, &got)
				c.check(t, got)
			}
		})
		// Nothing of a refused callback may have been applied, to either project's task.
		if c.status >= 400 {
			if now := read(task.ID, user); now != before {
				t.Fatalf("%s: a refused callback changed the task:\nbefore %s\nafter  %s", c.name, before, now)
			}
			if now := read(bTask.ID, bUser); now != beforeB {
				t.Fatalf("%s: a refused callback changed another project's task:\nbefore %s\nafter  %s", c.name, beforeB, now)
			}
		}
	}

	// A retried callback with the same Idempotency-Key appends its message once.
	h := as("worker")
	h.Set("Idempotency-Key", "cb-1")
	for range 2 {
		if r := env.Do(t, testenv.Request{Method: "POST", Path: path, Header: h, Body: `{"project_id":"` + a + `","message":"once"}`}); r.Status != 200 {
			t.Fatalf("callback: %d %s", r.Status, r.Body)
		}
	}
	var final model.Task
	env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/%d", task.ID), Token: user}).JSON(t, &final)
	if n := strings.Count(fmt.Sprint(final.Conversation), "once"); n != 1 {
		t.Fatalf("retried callback appended %d times", n)
	}

	// Agents list their own tasks with assigned=me.
	var mine []model.Task
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/projects/" + a + "/tasks?assigned=me", Header: as("worker")}).JSON(t, &mine)
	if len(mine) != 1 || mine[0].ID != task.ID {
		t.Fatalf("assigned=me for worker: %+v", mine)
	}
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/projects/" + a + "/tasks?assigned=me", Header: as("bystander")}).JSON(t, &mine)
	if len(mine) != 0 {
		t.Fatalf("assigned=me for bystander: %+v", mine)
	}
}
