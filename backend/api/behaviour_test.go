package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestCrossProjectIsolation: a token of one project never reads, changes or counts
// another project's tasks.
func TestCrossProjectIsolation(t *testing.T) { pgtest.Engines(t, testCrossProjectIsolation) }

func testCrossProjectIsolation(t *testing.T, engine string) {
	f := newFixture(t, engine)
	env := f.env
	// Both projects get Done tasks; clearing Done in one must not touch the other.
	for _, tok := range []string{f.rw, f.otherToken} {
		task := f.create(t, tok, `{"summary":"finished"}`)
		r := env.Do(t, testenv.Request{Method: "PUT", Path: fmt.Sprintf("/api/tasks/%d/status", task.ID), Token: tok, Body: `{"status":"Done"}`})
		if r.Status != 200 {
			t.Fatalf("status: %d %s", r.Status, r.Body)
		}
	}
	otherTask := f.create(t, f.otherToken, `{"summary":"theirs"}`)
	f.env.Do(t, testenv.Request{Method: "PUT", Path: fmt.Sprintf("/api/tasks/%d/status", otherTask.ID), Token: f.otherToken, Body: `{"status":"Waiting"}`})

	var mine []model.Task
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: f.rw}).JSON(t, &mine)
	for _, task := range mine {
		if task.ProjectID != f.project {
			t.Fatalf("list shows task %d of project %s", task.ID, task.ProjectID)
		}
	}
	if len(mine) != 3 {
		t.Fatalf("list shows %d tasks, want 3", len(mine))
	}
	for _, path := range []string{"/api/tasks?status=Waiting", "/api/tasks?status=Done", fmt.Sprintf("/api/tasks?after_id=%d", otherTask.ID-1)} {
		var got []model.Task
		env.Do(t, testenv.Request{Method: "GET", Path: path, Token: f.rw}).JSON(t, &got)
		for _, task := range got {
			if task.ProjectID != f.project {
				t.Fatalf("%s shows another project's task %d", path, task.ID)
			}
		}
	}

	for _, req := range []testenv.Request{
		{Method: "GET", Path: "/api/tasks/%d"},
		{Method: "PUT", Path: "/api/tasks/%d/status", Body: `{"status":"Failed"}`},
		{Method: "PUT", Path: "/api/tasks/%d/agent", Body: `{"agent_id":null}`},
		{Method: "PUT", Path: "/api/tasks/%d/steps/0/status", Body: `{"status":"completed"}`},
		{Method: "POST", Path: "/api/tasks/%d/respond", Body: `{"response":"hijack"}`},
		{Method: "DELETE", Path: "/api/tasks/%d"},
		{Method: "GET", Path: "/api/projects/" + f.project + "/tasks/%d"},
	} {
		req.Path = fmt.Sprintf(req.Path, otherTask.ID)
		req.Token = f.rw
		if r := env.Do(t, req); r.Status != http.StatusNotFound || strings.Contains(string(r.Body), "theirs") {
			t.Fatalf("%s %s by another project: %d %s", req.Method, req.Path, r.Status, r.Body)
		}
	}

	var deleted struct{ Deleted int }
	env.Do(t, testenv.Request{Method: "DELETE", Path: "/api/tasks/done", Token: f.rw}).JSON(t, &deleted)
	if deleted.Deleted != 1 {
		t.Fatalf("delete done removed %d, want 1 (only this project's)", deleted.Deleted)
	}
	// The other project's tasks are untouched: still Waiting, still there, its Done task too.
	var theirs []model.Task
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: f.otherToken}).JSON(t, &theirs)
	statuses := map[string]int{}
	for _, task := range theirs {
		statuses[task.Status]++
	}
	if len(theirs) != 3 || statuses["Waiting"] != 1 || statuses["Done"] != 1 {
		t.Fatalf("other project's tasks changed: %+v", statuses)
	}
}

func TestPaginationWithLinkHeader(t *testing.T) { pgtest.Engines(t, testPaginationWithLinkHeader) }

func testPaginationWithLinkHeader(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	for i := range 7 {
		status := "Backlog"
		if i%2 == 0 {
			status = "Done"
		}
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: fmt.Sprintf(`{"summary":"t%d"}`, i)})
		var task model.Task
		r.JSON(t, &task)
		env.Do(t, testenv.Request{Method: "PUT", Path: fmt.Sprintf("/api/tasks/%d/status", task.ID), Token: tok, Body: `{"status":"` + status + `"}`})
	}
	var seen []string
	path := "/api/tasks?status=Done&limit=3"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		r := env.Do(t, testenv.Request{Method: "GET", Path: path, Token: tok})
		var page []model.Task
		r.JSON(t, &page)
		for _, task := range page {
			if task.Status != "Done" {
				t.Fatalf("filter lost across pages: %+v", task)
			}
			seen = append(seen, task.Summary)
		}
		path = ""
		if link := r.Header.Get("Link"); link != "" {
			if !strings.HasSuffix(link, `>; rel="next"`) || !strings.Contains(link, "status=Done") {
				t.Fatalf("bad Link header %q", link)
			}
			path = link[1:strings.Index(link, ">")]
		}
	}
	if got := strings.Join(seen, ","); got != "t0,t2,t4,t6" {
		t.Fatalf("pages gave %s, want t0,t2,t4,t6 (oldest first)", got)
	}
	// The whole list without limit has no Link header.
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: tok}); r.Header.Get("Link") != "" {
		t.Fatalf("unpaged list has Link %q", r.Header.Get("Link"))
	}
}

func TestIdempotencyKey(t *testing.T) { pgtest.Engines(t, testIdempotencyKey) }

func testIdempotencyKey(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	create := func(key, body string) *testenv.Response {
		return env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: body,
			Header: http.Header{"Idempotency-Key": {key}}})
	}
	first := create("order-1", `{"summary":"once"}`)
	again := create("order-1", `{ "summary": "once" }`) // same request, other spacing
	if first.Status != 201 || again.Status != 201 || string(first.Body) != string(again.Body) {
		t.Fatalf("replay differs:\n%d %s\n%d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if r := create("order-1", `{"summary":"twice"}`); r.Status != http.StatusConflict || r.ErrorCode() != "conflict" {
		t.Fatalf("same key, other body: %d %s", r.Status, r.Body)
	}
	var all []model.Task
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: tok}).JSON(t, &all)
	if len(all) != 1 {
		t.Fatalf("%d tasks after replays, want 1", len(all))
	}
	// Keys are per project: another project may use the same key.
	other := env.NewProject(t, "other")
	otherTok := env.Token(t, other.ID, "task:write")
	if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: otherTok, Body: `{"summary":"twice"}`,
		Header: http.Header{"Idempotency-Key": {"order-1"}}}); r.Status != 201 {
		t.Fatalf("other project, same key: %d %s", r.Status, r.Body)
	}

	// respond: a retried answer is applied once, even after the task moved on.
	id := all[0].ID
	env.Do(t, testenv.Request{Method: "PUT", Path: fmt.Sprintf("/api/tasks/%d/status", id), Token: tok, Body: `{"status":"Waiting"}`})
	respond := func() *testenv.Response {
		return env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", id), Token: tok,
			Body: `{"response":"yes"}`, Header: http.Header{"Idempotency-Key": {"answer-1"}}})
	}
	r1, r2 := respond(), respond()
	if r1.Status != 200 || r2.Status != 200 || string(r1.Body) != string(r2.Body) {
		t.Fatalf("respond replay: %d %s / %d %s", r1.Status, r1.Body, r2.Status, r2.Body)
	}
	var task model.Task
	env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/%d", id), Token: tok}).JSON(t, &task)
	if len(task.Conversation) != 1 {
		t.Fatalf("conversation has %d entries after a retried respond, want 1", len(task.Conversation))
	}
}

// TestWaitingVersion: every new question bumps waiting_version: entering Waiting, and
// new waiting details while the task stays Waiting, from PUT status and from the agent
// callback alike; an answer to an earlier question is refused.
func TestWaitingVersion(t *testing.T) { pgtest.Engines(t, testWaitingVersion) }

func testWaitingVersion(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	env.Agent(t, env.Project.ID, "asker")
	var task model.Task
	env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: `{"summary":"q"}`}).JSON(t, &task)
	path := fmt.Sprintf("/api/tasks/%d", task.ID)
	update := func(r testenv.Request) model.Task {
		t.Helper()
		answer := env.Do(t, r)
		if answer.Status != http.StatusOK {
			t.Fatalf("%s %s %v: %d %s", r.Method, r.Path, r.Body, answer.Status, answer.Body)
		}
		var got model.Task
		answer.JSON(t, &got)
		return got
	}
	setStatus := func(body string) model.Task {
		t.Helper()
		return update(testenv.Request{Method: "PUT", Path: path + "/status", Token: tok, Body: body})
	}
	respond := func(answer string, version int64) *testenv.Response {
		return env.Do(t, testenv.Request{Method: "POST", Path: path + "/respond", Token: tok,
			Body: fmt.Sprintf(`{"response":%q,"waiting_version":%d}`, answer, version)})
	}
	if got := setStatus(`{"status":"Waiting","waiting_details":"first?"}`); got.WaitingVersion != 1 {
		t.Fatalf("version %d after first wait", got.WaitingVersion)
	}
	// Another question while the task stays Waiting: an answer to the first must not land on it.
	if got := setStatus(`{"status":"Waiting","waiting_details":"second?"}`); got.WaitingVersion != 2 || *got.WaitingDetails != "second?" {
		t.Fatalf("a new question while Waiting: %+v, want waiting_version 2", got)
	}
	// The same question again, or none, is not a new question.
	if got := setStatus(`{"status":"Waiting","waiting_details":"second?"}`); got.WaitingVersion != 2 {
		t.Fatalf("the same question again: waiting_version %d, want 2", got.WaitingVersion)
	}
	if got := setStatus(`{"status":"Waiting"}`); got.WaitingVersion != 2 || *got.WaitingDetails != "second?" {
		t.Fatalf("Waiting again without details: %+v", got)
	}
	if r := respond("to the first", 1); r.Status != http.StatusConflict || r.ErrorCode() != "conflict" {
		t.Fatalf("an answer to the first question: %d %s, want 409", r.Status, r.Body)
	}
	setStatus(`{"status":"Doing"}`)
	if got := setStatus(`{"status":"Waiting","waiting_details":"third?"}`); got.WaitingVersion != 3 {
		t.Fatalf("version %d after entering Waiting again", got.WaitingVersion)
	}
	r := respond("b", 3)
	var got model.Task
	r.JSON(t, &got)
	if r.Status != 200 || got.Status != "Doing" || got.WaitingDetails != nil || len(got.Conversation) != 1 || got.Conversation[0].Content != "b" {
		t.Fatalf("answer: %d %s", r.Status, r.Body)
	}

	// The agent callback: a question, then another one while still Waiting.
	update(testenv.Request{Method: "PUT", Path: path + "/agent", Token: tok, Body: fmt.Sprintf(`{"agent_id":%d}`, env.Agent(t, env.Project.ID, "callbacker").ID)})
	headers := env.AgentHeaders(t, env.Project.ID, "callbacker")
	callback := func(body string) model.Task {
		t.Helper()
		return update(testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/agent_callback/%d", task.ID), Header: headers,
			Body: fmt.Sprintf(`{"project_id":%q,%s}`, env.Project.ID, body)})
	}
	if got := callback(`"waiting_details":"fourth?"`); got.WaitingVersion != 4 {
		t.Fatalf("callback entering Waiting: waiting_version %d, want 4", got.WaitingVersion)
	}
	if got := callback(`"waitingDetails":"fifth?","message":"one more thing"`); got.WaitingVersion != 5 || *got.WaitingDetails != "fifth?" {
		t.Fatalf("callback asking again while Waiting: %+v, want waiting_version 5", got)
	}
	if got := callback(`"status":"Waiting","message":"still there?"`); got.WaitingVersion != 5 {
		t.Fatalf("callback staying Waiting with no new question: waiting_version %d, want 5", got.WaitingVersion)
	}
	if r := respond("to the fourth", 4); r.Status != http.StatusConflict {
		t.Fatalf("an answer to the callback's first question: %d %s, want 409", r.Status, r.Body)
	}
	if r := respond("to the fifth", 5); r.Status != http.StatusOK {
		t.Fatalf("an answer to the current question: %d %s", r.Status, r.Body)
	}
}

// TestTokenLifecycle: revoked and expired tokens stop working at once, last use is
// recorded, and tokens are stored hashed.
func TestTokenLifecycle(t *testing.T) { pgtest.Engines(t, testTokenLifecycle) }

func testTokenLifecycle(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	owner := auth.Owner(env.Project.ID)
	value, tok, err := env.Service.CreateToken(ctx, owner, service.CreateTokenInput{Name: "ci", Scopes: []string{"task:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(value, "adk_") || len(value) < 36 {
		t.Fatalf("token value %q", value)
	}
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: value}); r.Status != 200 {
		t.Fatalf("fresh token: %d", r.Status)
	}
	toks, err := env.Service.Tokens(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(toks, func(tk model.Token) bool { return tk.ID == tok.ID })
	if i < 0 {
		t.Fatalf("token %d missing from the list %+v", tok.ID, toks)
	}
	if toks[i].LastUsedAt == nil {
		t.Fatalf("last use not recorded")
	}
	if err := env.Service.RevokeToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: value}); r.Status != 401 || !strings.Contains(string(r.Body), "revoked") {
		t.Fatalf("revoked token: %d %s", r.Status, r.Body)
	}

	soon := time.Now().Add(1500 * time.Millisecond)
	short, _, err := env.Service.CreateToken(ctx, owner, service.CreateTokenInput{Name: "short", Scopes: []string{"task:read"}, ExpiresAt: &soon})
	if err != nil {
		t.Fatal(err)
	}
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: short}); r.Status != 200 {
		t.Fatalf("unexpired token: %d", r.Status)
	}
	time.Sleep(time.Until(soon) + 50*time.Millisecond)
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: short}); r.Status != 401 || !strings.Contains(string(r.Body), "expired") {
		t.Fatalf("expired token: %d %s", r.Status, r.Body)
	}

	// A caller cannot grant scopes it lacks.
	limited := &auth.Principal{Kind: auth.KindToken, ProjectID: env.Project.ID, Scopes: []string{"admin", "task:read"}}
	if _, _, err := env.Service.CreateToken(ctx, limited, service.CreateTokenInput{Name: "x", Scopes: []string{"task:write"}}); err == nil {
		t.Fatal("granted a scope the caller does not hold")
	}
	// A data token is refused by the tasks API.
	data := env.TypedToken(t, env.Project.ID, "data", "vector:read")
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: data}); r.Status != 403 || !strings.Contains(string(r.Body), "vector") {
		t.Fatalf("data token on tasks: %d %s", r.Status, r.Body)
	}
}

// TestTokensStoredHashed reads the database file itself and its WAL, as the server
// left them (no copy that would drop free pages and old frames), and a backup: no token
// value is in them, while the value's hash is, which shows the scan reads the right bytes.
// It is about SQLite's files; on PostgreSQL the hash is what tokens.hash holds too
// (the same store code), and pg_dump is PostgreSQL's backup.
func TestTokensStoredHashed(t *testing.T) {
	env := testenv.Start(t)
	value := env.Token(t, env.Project.ID, "task:read")
	backup := t.TempDir() + "/copy.db"
	if _, err := env.Service.Backup(context.Background(), auth.Owner(""), backup); err != nil {
		t.Fatal(err)
	}
	db := server.DBPath(env.DataDir)
	var live string
	for _, p := range []string{db, db + "-wal", backup} {
		raw := readFile(t, p)
		if strings.Contains(raw, value) || strings.Contains(raw, value[4:]) {
			t.Fatalf("token value found in %s", p)
		}
		if p != backup {
			live += raw
		}
	}
	if !strings.Contains(live, string(auth.HashToken(value))) {
		t.Fatalf("the token's hash is not in %s or its WAL: the scan reads the wrong bytes", db)
	}
}

// TestUpdateAnswerIsTheStoredTask: the task an update answers with is exactly what a GET
// reads afterwards, for every kind of update (the service builds the answer from the
// changes it wrote rather than reading the task back, so this pins them together).
func TestUpdateAnswerIsTheStoredTask(t *testing.T) {
	pgtest.Engines(t, testUpdateAnswerIsTheStoredTask)
}

func testUpdateAnswerIsTheStoredTask(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	p := env.Project.ID
	tok := env.Token(t, p, auth.TaskRead, auth.TaskWrite)
	agent := env.Agent(t, p, "pinned")
	other := env.Agent(t, p, "other")
	create := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok,
		Body: fmt.Sprintf(`{"summary":"pinned","steps":[{"title":"a"},{"title":"b"},{"title":"c"}],"agent_id":%d}`, agent.ID)})
	var task model.Task
	create.JSON(t, &task)
	base := fmt.Sprintf("/api/tasks/%d", task.ID)
	agentHeaders := env.AgentHeaders(t, p, "pinned")
	updates := []testenv.Request{
		{Method: "PUT", Path: base + "/steps/1/status", Token: tok, Body: `{"status":"in_progress"}`},
		{Method: "PUT", Path: base + "/status", Token: tok, Body: `{"status":"Waiting","waiting_details":"which one?"}`},
		{Method: "POST", Path: base + "/respond", Token: tok, Body: `{"response":"the second","waiting_version":1}`},
		{Method: "POST", Path: fmt.Sprintf("/api/agent_callback/%d", task.ID), Header: agentHeaders,
			Body: fmt.Sprintf(`{"project_id":%q,"status":"Doing","steps":[{"index":0,"status":"completed"},{"index":1,"status":"Done"}],"message":"two done"}`, p)},
		{Method: "POST", Path: fmt.Sprintf("/api/agent_callback/%d", task.ID), Header: agentHeaders,
			Body: fmt.Sprintf(`{"project_id":%q,"waiting_details":"and the third?"}`, p)},
		{Method: "PUT", Path: base + "/agent", Token: tok, Body: fmt.Sprintf(`{"agent_id":%d}`, other.ID)},
		{Method: "PUT", Path: base + "/agent", Token: tok, Body: `{"agent_id":null}`},
		{Method: "PUT", Path: base + "/status", Token: tok, Body: `{"status":"Done"}`},
	}
	for _, u := range updates {
		answer := env.Do(t, u)
		if answer.Status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", u.Method, u.Path, answer.Status, answer.Body)
		}
		stored := env.Do(t, testenv.Request{Method: "GET", Path: base, Token: tok})
		if string(answer.Body) != string(stored.Body) {
			t.Errorf("%s %s %s answered\n%s\nbut the task reads\n%s", u.Method, u.Path, u.Body, answer.Body, stored.Body)
		}
	}
}

// TestIDsNeverReused: deleting the newest task or agent does not hand its id to the next
// one (an agent holding the old id must never act on a stranger's task).
func TestIDsNeverReused(t *testing.T) { pgtest.Engines(t, testIDsNeverReused) }

func testIDsNeverReused(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, auth.TaskRead, auth.TaskWrite)
	create := func() model.Task {
		t.Helper()
		var task model.Task
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: `{"summary":"s","steps":[{"title":"a"}]}`})
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &task)
		return task
	}
	first := create()
	if r := env.Do(t, testenv.Request{Method: "DELETE", Path: fmt.Sprintf("/api/tasks/%d", first.ID), Token: tok}); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if second := create(); second.ID <= first.ID || second.Steps[0].ID == first.Steps[0].ID {
		t.Fatalf("the task after deleting task %d (step %d) has id %d (step %d)", first.ID, first.Steps[0].ID, second.ID, second.Steps[0].ID)
	}

	owner := auth.Owner(env.Project.ID)
	agent := env.Agent(t, env.Project.ID, "once")
	if err := env.Service.DeleteAgent(context.Background(), owner, agent.ID); err != nil {
		t.Fatal(err)
	}
	if again := env.Agent(t, env.Project.ID, "once"); again.ID <= agent.ID {
		t.Fatalf("the agent after deleting agent %d has id %d", agent.ID, again.ID)
	}
}
