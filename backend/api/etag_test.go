package api_test

import (
	"context"
	"fmt"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// frozenEnv is a server whose clock never moves: every change happens at the same
// instant, so nothing but the task's version can tell its states apart.
func frozenEnv(t *testing.T, engine string) *testenv.Env {
	t.Helper()
	return testenv.StartWithOn(t, engine, server.Config{Clock: jobstest.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))})
}

// TestTaskETag: GET sends a strong ETag that changes with every change of the task,
// even several in the same instant and changes that reach it from elsewhere (its agent
// deleted); If-None-Match answers 304; every update's answer carries the new ETag; If-Match
// that is not current answers 412 precondition_failed on every change of one task and
// changes nothing; a current one, or *, lets the change through.
func TestTaskETag(t *testing.T) { pgtest.Engines(t, testTaskETag) }

func testTaskETag(t *testing.T, engine string) {
	env := frozenEnv(t, engine)
	p := env.Project.ID
	tok := env.Token(t, p, auth.TaskRead, auth.TaskWrite)
	agent := env.Agent(t, p, "etag-agent")
	agentHeaders := env.AgentHeaders(t, p, "etag-agent")
	created := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok,
		Body: fmt.Sprintf(`{"summary":"tagged","steps":[{"title":"a"},{"title":"b"}],"agent_id":%d}`, agent.ID)})
	var task model.Task
	created.JSON(t, &task)
	base := fmt.Sprintf("/api/tasks/%d", task.ID)
	get := func(header http.Header) *testenv.Response {
		t.Helper()
		return env.Do(t, testenv.Request{Method: "GET", Path: base, Token: tok, Header: header})
	}
	etagOf := func() string {
		t.Helper()
		r := get(nil)
		if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
			t.Fatalf("GET %s: %d, ETag %q", base, r.Status, r.Header.Get("ETag"))
		}
		return r.Header.Get("ETag")
	}
	ifMatch := func(tags ...string) http.Header {
		h := http.Header{}
		for _, tag := range tags {
			h.Add("If-Match", tag)
		}
		return h
	}

	tag := etagOf()
	if created.Header.Get("ETag") != tag || tag[0] != '"' || tag[len(tag)-1] != '"' {
		t.Fatalf("the create answer's ETag %q, GET's %q: want the same strong tag", created.Header.Get("ETag"), tag)
	}
	mirror := env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/projects/%s/tasks/%d", p, task.ID), Header: agentHeaders})
	if mirror.Status != http.StatusOK || mirror.Header.Get("ETag") != tag {
		t.Fatalf("the project path: %d, ETag %q, want %q", mirror.Status, mirror.Header.Get("ETag"), tag)
	}

	// If-None-Match.
	for _, h := range []string{tag, "W/" + tag, `"nope", ` + tag, "*"} {
		r := get(http.Header{"If-None-Match": {h}})
		if r.Status != http.StatusNotModified || r.Header.Get("ETag") != tag || len(r.Body) != 0 {
			t.Fatalf("If-None-Match %s: %d, ETag %q, body %q; want 304 with the ETag and no body", h, r.Status, r.Header.Get("ETag"), r.Body)
		}
	}
	if r := get(http.Header{"If-None-Match": {`"nope"`}}); r.Status != http.StatusOK || r.Header.Get("ETag") != tag {
		t.Fatalf("If-None-Match of another tag: %d", r.Status)
	}
	r := env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/projects/%s/tasks/%d", p, task.ID), Header: func() http.Header {
		h := agentHeaders.Clone()
		h.Set("If-None-Match", tag)
		return h
	}()})
	if r.Status != http.StatusNotModified {
		t.Fatalf("If-None-Match on the project path: %d", r.Status)
	}

	// Every kind of change, each in the same instant as the others: a stale If-Match
	// changes nothing; the current one goes through and the answer carries the new tag.
	seen := map[string]bool{tag: true}
	changes := []testenv.Request{
		{Method: "PUT", Path: base + "/status", Token: tok, Body: `{"status":"Doing"}`},
		{Method: "PUT", Path: base + "/status", Token: tok, Body: `{"status":"Doing"}`}, // the same again is still a change
		{Method: "PUT", Path: base + "/steps/0/status", Token: tok, Body: `{"status":"completed"}`},
		{Method: "POST", Path: fmt.Sprintf("/api/agent_callback/%d", task.ID), Header: agentHeaders, Body: fmt.Sprintf(`{"project_id":%q,"waiting_details":"which?"}`, p)},
		{Method: "POST", Path: base + "/respond", Token: tok, Body: `{"response":"this one"}`},
		{Method: "PUT", Path: base + "/agent", Token: tok, Body: `{"agent_id":null}`},
	}
	for _, c := range changes {
		before := get(nil)
		stale := c
		stale.Header = ifMatch(`"stale"`, "W/"+tag)
		if c.Header != nil {
			stale.Header = c.Header.Clone()
			stale.Header.Set("If-Match", `"stale", W/`+tag)
		}
		if r := env.Do(t, stale); r.Status != http.StatusPreconditionFailed || r.ErrorCode() != "precondition_failed" {
			t.Fatalf("%s %s with a stale If-Match: %d %s, want 412 precondition_failed", c.Method, c.Path, r.Status, r.Body)
		}
		if after := get(nil); string(after.Body) != string(before.Body) || after.Header.Get("ETag") != tag {
			t.Fatalf("%s %s with a stale If-Match changed the task:\n%s\n%s", c.Method, c.Path, before.Body, after.Body)
		}
		current := c
		current.Header = ifMatch(`"other"`, tag)
		if c.Header != nil {
			current.Header = c.Header.Clone()
			current.Header.Set("If-Match", `"other", `+tag)
		}
		answer := env.Do(t, current)
		if answer.Status != http.StatusOK {
			t.Fatalf("%s %s with the current If-Match: %d %s", c.Method, c.Path, answer.Status, answer.Body)
		}
		tag = etagOf()
		if answer.Header.Get("ETag") != tag || seen[tag] {
			t.Fatalf("%s %s: the answer's ETag %q, GET's %q; a new tag was expected (seen %v)", c.Method, c.Path, answer.Header.Get("ETag"), tag, seen)
		}
		seen[tag] = true
	}
	var now model.Task
	get(nil).JSON(t, &now)
	if now.UpdatedAt != task.UpdatedAt {
		t.Fatalf("the clock moved (%v, %v): the test means every change in the same instant", task.UpdatedAt, now.UpdatedAt)
	}

	// A change that reaches the task from elsewhere: its agent deleted.
	if r := env.Do(t, testenv.Request{Method: "PUT", Path: base + "/agent", Token: tok, Body: fmt.Sprintf(`{"agent_id":%d}`, agent.ID)}); r.Status != http.StatusOK {
		t.Fatalf("assign: %d", r.Status)
	}
	tag = etagOf()
	if err := env.Service.DeleteAgent(context.Background(), auth.Owner(p), agent.ID); err != nil {
		t.Fatal(err)
	}
	if newTag := etagOf(); newTag == tag {
		t.Fatalf("deleting the task's agent kept its ETag %s", tag)
	} else {
		tag = newTag
	}

	// If-Match: * needs the task to exist, nothing more.
	if r := env.Do(t, testenv.Request{Method: "PUT", Path: base + "/status", Token: tok, Body: `{"status":"Done"}`, Header: ifMatch("*")}); r.Status != http.StatusOK {
		t.Fatalf("If-Match *: %d %s", r.Status, r.Body)
	}
	// DELETE: stale, then current; an unknown task stays 404 whatever If-Match says.
	if r := env.Do(t, testenv.Request{Method: "DELETE", Path: base, Token: tok, Header: ifMatch(tag)}); r.Status != http.StatusPreconditionFailed || r.ErrorCode() != "precondition_failed" {
		t.Fatalf("DELETE with a stale If-Match: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, testenv.Request{Method: "DELETE", Path: base, Token: tok, Header: ifMatch(etagOf())}); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE with the current If-Match: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, testenv.Request{Method: "PUT", Path: base + "/status", Token: tok, Body: `{"status":"Done"}`, Header: ifMatch(tag)}); r.Status != http.StatusNotFound {
		t.Fatalf("If-Match on a deleted task: %d %s, want 404", r.Status, r.Body)
	}
}

// TestIfMatchIsAtomic: concurrent changes that all carry the same current If-Match:
// exactly one goes through, the others answer 412 (the check and the write are one).
func TestIfMatchIsAtomic(t *testing.T) { pgtest.Engines(t, testIfMatchIsAtomic) }

func testIfMatchIsAtomic(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, auth.TaskRead, auth.TaskWrite)
	var task model.Task
	created := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: `{"summary":"contended"}`})
	created.JSON(t, &task)
	tag := created.Header.Get("ETag")
	const writers = 8
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() { // env.Do may stop the test, which only the test's goroutine may do
			defer wg.Done()
			body := `{"status":"` + model.TaskStatuses[i%len(model.TaskStatuses)] + `"}`
			req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/api/tasks/%d/status", env.URL, task.ID), strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("If-Match", tag)
			if resp, err := env.Client.Do(req); err == nil {
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	ok, failed := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusPreconditionFailed:
			failed++
		}
	}
	if ok != 1 || failed != writers-1 {
		t.Fatalf("%d writers with the same If-Match: %v; want one 200 and %d 412", writers, statuses, writers-1)
	}
}
