package graphql_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/cli"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// namedToken creates a platform token with a name of its own, to find it in the activity.
func namedToken(t *testing.T, env *testenv.Env, pid, name string, scopes ...string) string {
	t.Helper()
	v, _, err := env.Service.CreateToken(context.Background(), auth.Owner(pid), service.CreateTokenInput{Name: name, Type: "platform", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSkillsAndRequiredSkills(t *testing.T) { pgtest.Engines(t, testSkillsAndRequiredSkills) }

func testSkillsAndRequiredSkills(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)
	reader := env.Token(t, pid, auth.TaskRead, auth.TaskWrite)
	py, plain := env.Agent(t, pid, "py"), env.Agent(t, pid, "plain")

	var python, goSkill struct{ ID int64 }
	do(t, env, admin, `mutation { createSkill(name: "python", description: "Writes Python") { id name } }`, nil).ok(t).into(t, "createSkill", &python)
	do(t, env, admin, `mutation { createSkill(name: "go") { id } }`, nil).ok(t).into(t, "createSkill", &goSkill)
	if c := do(t, env, admin, `mutation { createSkill(name: "go") { id } }`, nil).code(t); c != "conflict" {
		t.Fatalf("duplicate skill: %s", c)
	}
	if c := do(t, env, reader, `mutation { createSkill(name: "rust") { id } }`, nil).code(t); c != "forbidden" {
		t.Fatalf("createSkill without admin: %s", c)
	}
	if c := do(t, env, admin, `mutation { createSkill(name: " spaced") { id } }`, nil).code(t); c != "invalid_argument" {
		t.Fatalf("bad name: %s", c)
	}
	var skills []struct{ Name string }
	do(t, env, reader, `{ skills { name } }`, nil).ok(t).into(t, "skills", &skills)
	if len(skills) != 2 || skills[0].Name != "go" {
		t.Fatalf("skills = %+v", skills)
	}
	attach := `mutation($a: Int!, $s: Int!) { attachSkill(agentId: $a, skillId: $s) { id skills { name } } }`
	var ag struct{ Skills []struct{ Name string } }
	do(t, env, admin, attach, map[string]any{"a": py.ID, "s": python.ID}).ok(t).into(t, "attachSkill", &ag)
	do(t, env, admin, attach, map[string]any{"a": py.ID, "s": goSkill.ID}).ok(t).into(t, "attachSkill", &ag)
	if len(ag.Skills) != 2 || ag.Skills[0].Name != "go" || ag.Skills[1].Name != "python" {
		t.Fatalf("agent skills = %+v", ag)
	}

	// REST: required_skills on create; an agent lacking one is a 400 naming it.
	resp := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: reader,
		Body: map[string]any{"summary": "port it", "agent_id": plain.ID, "required_skills": []string{"python", "go"}}})
	if resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), `lacks the required skills \"go\" and \"python\"`) {
		t.Fatalf("create for an agent without the skills: %d %s", resp.Status, resp.Body)
	}
	resp = env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: reader,
		Body: map[string]any{"summary": "port it", "required_skills": []string{"cobol"}}})
	if resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), `\"cobol\" is not a skill of this project`) {
		t.Fatalf("unknown skill: %d %s", resp.Status, resp.Body)
	}
	resp = env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: reader,
		Body: map[string]any{"summary": "port it", "agent_id": py.ID, "required_skills": []string{"python", "python"}}})
	var task struct {
		ID             int64
		Status         string
		RequiredSkills []string `json:"required_skills"`
	}
	resp.JSON(t, &task)
	if resp.Status != http.StatusCreated || task.Status != "Todo" || len(task.RequiredSkills) != 1 || task.RequiredSkills[0] != "python" {
		t.Fatalf("create: %d %s", resp.Status, resp.Body)
	}
	path := "/api/tasks/" + strconv.FormatInt(task.ID, 10)
	resp = env.Do(t, testenv.Request{Method: "PUT", Path: path + "/agent", Token: reader, Body: map[string]any{"agent_id": plain.ID}})
	if resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), `agent \"plain\" lacks the required skill \"python\"`) {
		t.Fatalf("reassign to an agent without the skill: %d %s", resp.Status, resp.Body)
	}
	r := do(t, env, reader, `mutation($id: Int!, $a: Int) { assignTask(id: $id, agentId: $a) { id } }`, map[string]any{"id": task.ID, "a": plain.ID})
	if r.code(t) != "invalid_argument" || !strings.Contains(r.Errors[0].Message, "python") {
		t.Fatalf("assignTask: %s", r.raw)
	}
	// Unassigning is always allowed; GraphQL createTask takes requiredSkills too.
	do(t, env, reader, `mutation($id: Int!) { assignTask(id: $id) { id } }`, map[string]any{"id": task.ID}).ok(t)
	var gt struct{ RequiredSkills []string }
	do(t, env, reader, `mutation($a: Int) { createTask(summary: "x", agentId: $a, requiredSkills: ["go"]) { requiredSkills } }`, map[string]any{"a": py.ID}).ok(t).into(t, "createTask", &gt)
	if len(gt.RequiredSkills) != 1 || gt.RequiredSkills[0] != "go" {
		t.Fatalf("createTask requiredSkills = %+v", gt)
	}

	// Agent.skills is loaded once per request, whatever the number of agents.
	st := env.Service.Store()
	count := func() int64 {
		before := st.ReadQueries()
		do(t, env, reader, `{ agents { id skills { name } } }`, nil).ok(t)
		return st.ReadQueries() - before
	}
	few := count()
	for i := range 8 {
		a := env.Agent(t, pid, "more"+strconv.Itoa(i))
		do(t, env, admin, attach, map[string]any{"a": a.ID, "s": goSkill.ID}).ok(t)
	}
	if many := count(); many != few {
		t.Fatalf("agents with skills: %d queries for 2 agents, %d for 10", few, many)
	}

	// Deleting a skill: the agent loses it, the task stops requiring it.
	do(t, env, admin, `mutation($s: Int!) { deleteSkill(id: $s) }`, map[string]any{"s": python.ID}).ok(t)
	resp = env.Do(t, testenv.Request{Method: "GET", Path: path, Token: reader})
	resp.JSON(t, &task)
	if len(task.RequiredSkills) != 0 {
		t.Fatalf("after deleteSkill: %s", resp.Body)
	}
}

func TestJobsGraphQL(t *testing.T) { pgtest.Engines(t, testJobsGraphQL) }

func testJobsGraphQL(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)
	reader := env.Token(t, pid, auth.TaskRead)
	a := env.Agent(t, pid, "writer")

	for _, bad := range []struct{ args, want string }{
		{`cron: "61 * * * *"`, "not a valid cron expression"},
		{`cron: "* * * * *", timezone: "Mars/Olympus"`, "not an IANA time zone"},
		{`cron: "@every 10s"`, "more often than once a minute"},
		{`cron: "CRON_TZ=UTC * * * * *"`, "give the time zone in timezone"},
	} {
		r := do(t, env, admin, `mutation { createJob(name: "j", summary: "s", `+bad.args+`) { id } }`, nil)
		if r.code(t) != "invalid_argument" || !strings.Contains(r.Errors[0].Message, bad.want) {
			t.Fatalf("%s: %s", bad.args, r.raw)
		}
	}
	if c := do(t, env, reader, `mutation { createJob(name: "j", summary: "s", cron: "@daily") { id } }`, nil).code(t); c != "forbidden" {
		t.Fatalf("createJob without admin: %s", c)
	}
	var job struct {
		ID                  int64
		Timezone, NextRunAt string
		Paused              bool
		CatchUp             string
		Steps               []string
		AgentID             *int64
	}
	do(t, env, admin, `mutation($a: Int) { createJob(name: "weekly", cron: "0 9 * * 1", timezone: "America/New_York", summary: "Weekly report",
		steps: ["gather", "write"], agentId: $a, catchUp: run_once) { id timezone nextRunAt paused catchUp steps agentId } }`, map[string]any{"a": a.ID}).ok(t).into(t, "createJob", &job)
	if job.Timezone != "America/New_York" || job.CatchUp != "run_once" || job.NextRunAt == "" || len(job.Steps) != 2 || job.AgentID == nil {
		t.Fatalf("job = %+v", job)
	}
	next := mustTime(t, job.NextRunAt)
	if h := next.In(mustLoc(t, "America/New_York")).Hour(); h != 9 || next.In(mustLoc(t, "America/New_York")).Weekday() != 1 {
		t.Fatalf("next run %s is not a Monday 09:00 in New York", job.NextRunAt)
	}
	vars := map[string]any{"id": job.ID}
	var paused struct {
		Paused    bool
		NextRunAt *string
	}
	do(t, env, admin, `mutation($id: Int!) { pauseJob(id: $id) { paused nextRunAt } }`, vars).ok(t).into(t, "pauseJob", &paused)
	if !paused.Paused || paused.NextRunAt != nil {
		t.Fatalf("paused job = %+v", paused)
	}
	var run struct {
		Outcome, Trigger string
		TaskID           *int64
	}
	do(t, env, admin, `mutation($id: Int!) { runJobNow(id: $id) { outcome trigger taskId } }`, vars).ok(t).into(t, "runJobNow", &run)
	if run.Outcome != "created" || run.Trigger != "manual" || run.TaskID == nil {
		t.Fatalf("run = %+v", run)
	}
	var task struct {
		Source string
		Status string
	}
	do(t, env, reader, `query($id: Int!) { task(id: $id) { source status } }`, map[string]any{"id": *run.TaskID}).ok(t).into(t, "task", &task)
	if task.Source != "job" || task.Status != "Todo" {
		t.Fatalf("job's task = %+v", task)
	}
	do(t, env, admin, `mutation($id: Int!) { resumeJob(id: $id) { paused nextRunAt } }`, vars).ok(t).into(t, "resumeJob", &job)
	if job.Paused || job.NextRunAt == "" {
		t.Fatalf("resumed job = %+v", job)
	}
	do(t, env, admin, `mutation($id: Int!) { updateJob(id: $id, cron: "@hourly", timezone: "UTC") { nextRunAt } }`, vars).ok(t).into(t, "updateJob", &job)
	if n := mustTime(t, job.NextRunAt); n.Minute() != 0 || n.Sub(next) >= 0 {
		t.Fatalf("rescheduled next run %s", job.NextRunAt)
	}
	var runs []struct{ Outcome string }
	do(t, env, reader, `query($id: Int!) { jobRuns(jobId: $id, first: 10) { outcome } }`, vars).ok(t).into(t, "jobRuns", &runs)
	var jobs []struct{ LastRunAt string }
	do(t, env, reader, `{ jobs { lastRunAt } }`, nil).ok(t).into(t, "jobs", &jobs)
	if len(runs) != 1 || len(jobs) != 1 || jobs[0].LastRunAt == "" {
		t.Fatalf("runs %+v jobs %+v", runs, jobs)
	}
	do(t, env, admin, `mutation($id: Int!) { deleteJob(id: $id) }`, vars).ok(t)
	if c := do(t, env, reader, `query($id: Int!) { job(id: $id) { id } }`, vars).code(t); c != "not_found" {
		t.Fatalf("deleted job: %s", c)
	}
	// The limits apply to the new lists like to every other.
	var expensive strings.Builder
	for i := range 30 { // 30 x 1000 runs x 12 fields, over MaxCost
		expensive.WriteString(" r" + strconv.Itoa(i) + ": jobRuns(jobId: $id, first: 1000) { id jobId outcome trigger taskId reason ranAt scheduledFor a1: id a2: id a3: id }")
	}
	r := do(t, env, reader, `query($id: Int!) {`+expensive.String()+` }`, vars)
	if r.status != http.StatusBadRequest || r.code(t) != "invalid_argument" || !strings.Contains(r.Errors[0].Message, "too expensive") {
		t.Fatalf("an expensive jobRuns: %d %s", r.status, r.raw)
	}
}

func TestBudgetExceeded(t *testing.T) { pgtest.Engines(t, testBudgetExceeded) }

func testBudgetExceeded(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)
	a := env.Agent(t, pid, "spender")
	headers := env.AgentHeaders(t, pid, "spender")
	var b struct {
		MonthlyUsd *float64
		SpentUsd   float64
		Exceeded   bool
	}
	do(t, env, admin, `mutation { setBudget(monthlyUsd: 1.5) { monthlyUsd spentUsd exceeded } }`, nil).ok(t).into(t, "setBudget", &b)
	if b.MonthlyUsd == nil || *b.MonthlyUsd != 1.5 || b.Exceeded {
		t.Fatalf("budget = %+v", b)
	}
	create := func(agent bool) map[string]any {
		body := map[string]any{"summary": "work"}
		if agent {
			body["agent_id"] = a.ID
		}
		resp := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: admin, Body: body})
		if resp.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", resp.Status, resp.Body)
		}
		var m map[string]any
		resp.JSON(t, &m)
		return m
	}
	report := func(taskID any, usage map[string]any) *testenv.Response {
		id := strconv.FormatFloat(taskID.(float64), 'f', 0, 64)
		return env.Do(t, testenv.Request{Method: "POST", Path: "/api/agent_callback/" + id, Header: headers,
			Body: map[string]any{"project_id": pid, "status": "Doing", "usage": usage}})
	}
	first := create(true)
	if first["status"] != "Todo" || first["blocked_reason"] != nil {
		t.Fatalf("before spending: %v", first)
	}
	for _, bad := range []map[string]any{
		{"model": "m", "cost_usd": -1},
		{"model": "m", "input_tokens": -5},
		{"model": "", "cost_usd": 0.1},
		{"model": strings.Repeat("m", 129)},
		{"model": "m", "cost_usd": "lots"},
	} {
		if resp := report(first["id"], bad); resp.Status != http.StatusBadRequest {
			t.Fatalf("usage %v: %d %s", bad, resp.Status, resp.Body)
		}
	}
	if resp := report(first["id"], map[string]any{"model": "gpt-x", "input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.75}); resp.Status != http.StatusOK {
		t.Fatalf("callback: %d %s", resp.Status, resp.Body)
	}
	if create(true)["status"] != "Todo" {
		t.Fatal("a task was held before the budget was spent")
	}
	report(first["id"], map[string]any{"model": "gpt-y", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.75})

	held := create(true)
	reason, _ := held["blocked_reason"].(string)
	if held["status"] != "Backlog" || !strings.Contains(reason, "monthly budget of $1.50 is spent") || strings.Contains(reason, "setBudget") {
		t.Fatalf("after the budget is spent: %v", held)
	}
	if plain := create(false); plain["status"] != "Backlog" || plain["blocked_reason"] != nil {
		t.Fatalf("an unassigned task: %v", plain)
	}
	var gt struct{ Status, BlockedReason string }
	do(t, env, admin, `mutation($a: Int) { createTask(summary: "g", agentId: $a) { status blockedReason } }`, map[string]any{"a": a.ID}).ok(t).into(t, "createTask", &gt)
	if gt.Status != "Backlog" || gt.BlockedReason == "" {
		t.Fatalf("GraphQL createTask over budget: %+v", gt)
	}
	report(first["id"], map[string]any{"model": "gpt-y", "cost_usd": 0.25})
	do(t, env, admin, `{ budget { monthlyUsd spentUsd exceeded } }`, nil).ok(t).into(t, "budget", &b)
	if !b.Exceeded || b.SpentUsd != 1.75 {
		t.Fatalf("budget = %+v", b)
	}
	var events []struct{ Action string }
	do(t, env, admin, `{ activity(objectType: "budget") { action } }`, nil).ok(t).into(t, "activity", &events)
	exceeded := 0
	for _, e := range events {
		if e.Action == "budget.exceeded" {
			exceeded++
		}
	}
	if exceeded != 1 {
		t.Fatalf("%d budget.exceeded events, want 1: %+v", exceeded, events)
	}

	// Usage by day, agent and model.
	var u struct {
		Total   struct{ InputTokens, OutputTokens, CostUsd float64 }
		ByModel []struct {
			Model   string
			CostUsd float64
			Reports int
		}
		ByAgent []struct{ AgentName string }
		ByDay   []struct{ Day string }
		Rows    []struct{ Day, AgentName, Model string }
	}
	do(t, env, admin, `{ usage(from: "2000-01-01", to: "2000-01-02") { total { costUsd } } }`, nil).ok(t)
	r := do(t, env, admin, `{ usage(from: "2026-01-01", to: "2020-01-01") { total { costUsd } } }`, nil)
	if r.code(t) != "invalid_argument" {
		t.Fatalf("a backwards range: %s", r.raw)
	}
	today := mustTime(t, first["created_at"].(string)).UTC().Format("2006-01-02")
	do(t, env, admin, `query($d: String!) { usage(from: $d, to: $d) { total { inputTokens outputTokens costUsd } byModel { model costUsd reports } byAgent { agentName } byDay { day } rows { day agentName model } } }`,
		map[string]any{"d": today}).ok(t).into(t, "usage", &u)
	if u.Total.InputTokens != 1010 || u.Total.OutputTokens != 205 || u.Total.CostUsd != 1.75 || len(u.ByModel) != 2 || u.ByModel[1].Model != "gpt-y" ||
		u.ByModel[1].CostUsd != 1 || u.ByModel[1].Reports != 2 || len(u.ByAgent) != 1 || u.ByAgent[0].AgentName != "spender" ||
		len(u.ByDay) != 1 || u.ByDay[0].Day != today || len(u.Rows) != 2 {
		t.Fatalf("usage = %+v", u)
	}
	// Raising the budget lets new tasks go to Todo again.
	do(t, env, admin, `mutation { setBudget(monthlyUsd: 100) { exceeded } }`, nil).ok(t)
	if create(true)["status"] != "Todo" {
		t.Fatal("still held after raising the budget")
	}
}

// TestActivityEveryInterface: a REST mutation, a GraphQL mutation (plain and from the
// web UI) and a CLI command each land in the activity with their actor and interface.
func TestActivityEveryInterface(t *testing.T) { pgtest.Engines(t, testActivityEveryInterface) }

func testActivityEveryInterface(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	rest := namedToken(t, env, pid, "ci-pipeline", auth.TaskWrite)
	gql := namedToken(t, env, pid, "integration", allScopes...)

	resp := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: rest, Body: map[string]any{"summary": "from REST"}})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.Status, resp.Body)
	}
	var skill struct{ ID int64 }
	do(t, env, gql, `mutation { createSkill(name: "sql") { id } }`, nil).ok(t).into(t, "createSkill", &skill)
	web := env.Do(t, testenv.Request{Method: "POST", Path: "/graphql", Token: gql, Header: http.Header{"X-Agentdesk-Client": {"web"}},
		Body: map[string]any{"query": `mutation { createSkill(name: "ui-made") { id } }`}})
	if web.Status != http.StatusOK {
		t.Fatalf("web: %s", web.Body)
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Main([]string{"agent", "create", "--project", pid, "--name", "from-cli", "--data", env.DataDir, "--db", env.DB.URL}, &stdout, &stderr, nil); code != 0 {
		t.Fatalf("cli: %d %s", code, stderr.String())
	}
	// A knowledge base made through REST with a data token is that token's.
	loader, _, err := env.Service.CreateToken(context.Background(), auth.Owner(pid), service.CreateTokenInput{Name: "kb-loader", Type: "data", Scopes: []string{auth.VectorWrite}})
	if err != nil {
		t.Fatal(err)
	}
	sp := env.Do(t, testenv.Request{Method: "POST", Path: "/api/vector/spaces", Token: loader, Body: map[string]any{"name": "runbooks"}})
	var space struct{ ID int64 }
	if sp.Status != http.StatusCreated {
		t.Fatalf("space: %d %s", sp.Status, sp.Body)
	}
	sp.JSON(t, &space)
	// An agent's callback is the agent's, through REST.
	agentTask := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: gql, Body: map[string]any{"summary": "for the agent", "agent_id": 1}})
	var at struct{ ID int64 }
	agentTask.JSON(t, &at)
	cb := env.Do(t, testenv.Request{Method: "POST", Path: "/api/agent_callback/" + strconv.FormatInt(at.ID, 10), Header: env.AgentHeaders(t, pid, "from-cli"),
		Body: map[string]any{"project_id": pid, "status": "Doing"}})
	if cb.Status != http.StatusOK {
		t.Fatalf("callback: %d %s", cb.Status, cb.Body)
	}

	type entry struct{ ActorKind, Actor, Via, Action, ObjectType, ObjectID string }
	var all []entry
	do(t, env, gql, `{ activity(first: 50) { actorKind actor via action objectType objectId } }`, nil).ok(t).into(t, "activity", &all)
	want := []entry{ // newest first
		{"agent", "from-cli", "rest", "task.updated", "task", strconv.FormatInt(at.ID, 10)},
		{"token", "integration", "rest", "task.created", "task", strconv.FormatInt(at.ID, 10)},
		{"token", "kb-loader", "rest", "vector.space.created", "vector", strconv.FormatInt(space.ID, 10)},
		{"system", "system", "internal", "token.created", "token", "3"},
		{"owner", "owner", "cli", "agent.created", "agent", "1"},
		{"token", "integration", "ui", "skill.created", "skill", strconv.FormatInt(skill.ID+1, 10)},
		{"token", "integration", "graphql", "skill.created", "skill", strconv.FormatInt(skill.ID, 10)},
		{"token", "ci-pipeline", "rest", "task.created", "task", "1"},
		// The set-up: the two tokens and the project itself, made by the test through
		// the service (no interface, so system/internal).
		{"system", "system", "internal", "token.created", "token", "2"},
		{"system", "system", "internal", "token.created", "token", "1"},
		{"system", "system", "internal", "project.created", "project", pid},
	}
	if len(all) != len(want) {
		t.Fatalf("activity = %+v", all)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Errorf("activity[%d] = %+v, want %+v", i, all[i], want[i])
		}
	}
	// Filters and paging.
	var some []struct{ ID int64 }
	do(t, env, gql, `{ activity(actor: "integration", via: "graphql") { id } }`, nil).ok(t).into(t, "activity", &some)
	if len(some) != 1 {
		t.Fatalf("filtered by actor and via: %+v", some)
	}
	do(t, env, gql, `{ activity(objectType: "task", objectId: "1") { id } }`, nil).ok(t).into(t, "activity", &some)
	if len(some) != 1 {
		t.Fatalf("filtered by object: %+v", some)
	}
	var page1, page2 []struct{ ID int64 }
	do(t, env, gql, `{ activity(first: 4) { id } }`, nil).ok(t).into(t, "activity", &page1)
	do(t, env, gql, `query($b: Int) { activity(first: 4, before: $b) { id } }`, map[string]any{"b": page1[3].ID}).ok(t).into(t, "activity", &page2)
	if len(page1) != 4 || len(page2) != min(4, len(want)-4) || page2[0].ID >= page1[3].ID {
		t.Fatalf("pages %+v %+v", page1, page2)
	}
	do(t, env, gql, `{ activity(since: "2999-01-01T00:00:00Z") { id } }`, nil).ok(t).into(t, "activity", &some)
	if len(some) != 0 {
		t.Fatalf("since the future: %+v", some)
	}
	if r := do(t, env, gql, `{ activity(since: "yesterday") { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("bad since: %s", r.raw)
	}
	if c := do(t, env, env.Token(t, pid, auth.TaskRead), `{ activity { id } }`, nil).code(t); c != "forbidden" {
		t.Fatalf("activity without admin: %s", c)
	}
	// Retention: pruning forgets what is older than the cut.
	n, err := env.Service.PruneActivity(context.Background(), mustTime(t, "2999-01-01T00:00:00Z"))
	if err != nil || n != int64(len(want))+1 { // +1: the read-only token made above
		t.Fatalf("pruned %d, %v", n, err)
	}
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
