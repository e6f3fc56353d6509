package graphql_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	agql "github.com/agentdesk/agentdesk/backend/graphql"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"github.com/agentdesk/agentdesk/frontend"
)

type gqlErr struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type result struct {
	status int
	header http.Header
	Data   map[string]json.RawMessage `json:"data"`
	Errors []gqlErr                   `json:"errors"`
	raw    string
}

// code is the extensions.code of the only error, failing when there is not exactly one.
func (r *result) code(t *testing.T) string {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Fatalf("want exactly one error, got %d: %s", len(r.Errors), r.raw)
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

func (r *result) ok(t *testing.T) *result {
	t.Helper()
	if r.status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("want a clean 200, got %d: %s", r.status, r.raw)
	}
	return r
}

// into decodes data.field into v.
func (r *result) into(t *testing.T, field string, v any) {
	t.Helper()
	raw, ok := r.Data[field]
	if !ok {
		t.Fatalf("no data.%s in %s", field, r.raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode data.%s: %v", field, err)
	}
}

// do posts a query asking for application/graphql-response+json, whose status tells a
// request error (4xx, no data) from an executed one (200); TestErrorShape checks the
// 200 that application/json gets for both.
func do(t *testing.T, env *testenv.Env, token, query string, vars map[string]any) *result {
	t.Helper()
	resp := env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/graphql", Token: token,
		Header: http.Header{"Accept": {"application/graphql-response+json"}},
		Body:   map[string]any{"query": query, "variables": vars}})
	r := &result{status: resp.Status, header: resp.Header, raw: string(resp.Body)}
	resp.JSON(t, r)
	return r
}

var allScopes = []string{auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite, auth.Admin}

func TestSpecQueriesAsWritten(t *testing.T) { pgtest.Engines(t, testSpecQueriesAsWritten) }

func testSpecQueriesAsWritten(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	agent := env.Agent(t, pid, "builder")
	tok := env.Token(t, pid, auth.TaskRead)

	var projects []struct{ ID, Name, Namespace string }
	do(t, env, tok, `{ projects { id name namespace } }`, nil).ok(t).into(t, "projects", &projects)
	if len(projects) != 1 || projects[0].ID != pid || projects[0].Name != "Personal" || projects[0].Namespace != "default" {
		t.Fatalf("projects = %+v", projects)
	}

	var agents []struct {
		ID   int64
		Name string
	}
	do(t, env, tok, `{ agents { id name } }`, nil).ok(t).into(t, "agents", &agents)
	if len(agents) != 1 || agents[0].ID != agent.ID || agents[0].Name != "builder" {
		t.Fatalf("agents = %+v", agents)
	}
}

func TestAuthentication(t *testing.T) { pgtest.Engines(t, testAuthentication) }

func testAuthentication(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID

	r := do(t, env, "", `{ projects { id } }`, nil)
	if r.status != http.StatusUnauthorized || r.code(t) != "unauthenticated" || r.header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("no token: %d %s %v", r.status, r.raw, r.header)
	}
	r = do(t, env, "adk_notARealTokenAtAllxxxxxxxxxxxxxxxxxx", `{ projects { id } }`, nil)
	if r.status != http.StatusUnauthorized || r.code(t) != "unauthenticated" {
		t.Fatalf("wrong token: %d %s", r.status, r.raw)
	}

	// Authenticated but missing a scope: the service says forbidden.
	r = do(t, env, env.Token(t, pid, auth.MessagingRead), `{ agents { id name } }`, nil)
	if r.status != http.StatusOK || r.code(t) != "forbidden" || !strings.Contains(r.raw, `"data":null`) {
		t.Fatalf("missing scope: %d %s", r.status, r.raw)
	}
	// Data tokens are for the vector endpoints only.
	data := env.TypedToken(t, pid, "data", auth.VectorRead)
	if r = do(t, env, data, `{ tasks { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("data token: %s", r.raw)
	}
}

func TestAgents(t *testing.T) { pgtest.Engines(t, testAgents) }

func testAgents(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)

	var a struct {
		ID   int64
		Name string
	}
	do(t, env, admin, `mutation { createAgent(name: "coder") { id name } }`, nil).ok(t).into(t, "createAgent", &a)
	if a.ID == 0 || a.Name != "coder" {
		t.Fatalf("createAgent = %+v", a)
	}
	if r := do(t, env, admin, `mutation { createAgent(name: "coder") { id } }`, nil); r.code(t) != "conflict" {
		t.Fatalf("duplicate agent: %s", r.raw)
	}
	if r := do(t, env, admin, `mutation { createAgent(name: "bad name!") { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("bad agent name: %s", r.raw)
	}
	if r := do(t, env, env.Token(t, pid, auth.TaskRead, auth.TaskWrite), `mutation { createAgent(name: "x") { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("createAgent without admin: %s", r.raw)
	}

	var vars []struct{ Name, Value string }
	do(t, env, admin, `{ agentEnv(name: "coder", url: "http://127.0.0.1:9") { name value } }`, nil).ok(t).into(t, "agentEnv", &vars)
	got := map[string]string{}
	for _, v := range vars {
		got[v.Name] = v.Value
	}
	if got["AGENT_NAME"] != "coder" || got["SERVICE_PROJECT_ID"] != pid || got["AGENTDESK_URL"] != "http://127.0.0.1:9" || got["SERVICE_API_TOKEN"] == "" {
		t.Fatalf("agentEnv = %v", got)
	}
	if r := do(t, env, admin, `{ agentEnv(name: "nobody") { name } }`, nil); r.code(t) != "not_found" {
		t.Fatalf("agentEnv of unknown agent: %s", r.raw)
	}
	if r := do(t, env, env.Token(t, pid, auth.TaskRead), `{ agentEnv(name: "coder") { name } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("agentEnv without admin: %s", r.raw)
	}
}

type task struct {
	ID      int64
	Summary string
	Details string
	Status  string
	Steps   []struct {
		Index         int
		Title, Status string
	}
	Agent *struct {
		ID   int64
		Name string
	}
	WaitingDetails *string
	WaitingVersion int64
	Conversation   []struct {
		Role, Content, CreatedAt string
		Question                 *string
	}
	CreatedAt string
	UpdatedAt string
}

const taskFields = `id summary details status steps { index title status } agent { id name }
	waitingDetails waitingVersion conversation { role content createdAt question } createdAt updatedAt`

func TestTasks(t *testing.T) { pgtest.Engines(t, testTasks) }

func testTasks(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	agent := env.Agent(t, pid, "builder")
	w := env.Token(t, pid, auth.TaskRead, auth.TaskWrite)

	var created task
	do(t, env, w, `mutation($agent: Int) { createTask(summary: "Ship it", details: "all of it",
		steps: [{title: "build"}, {title: "test"}], agentId: $agent) { `+taskFields+` } }`,
		map[string]any{"agent": agent.ID}).ok(t).into(t, "createTask", &created)
	if created.ID == 0 || created.Status != "Todo" || len(created.Steps) != 2 || created.Steps[1].Index != 1 ||
		created.Steps[1].Status != "pending" || created.Agent == nil || created.Agent.Name != "builder" {
		t.Fatalf("createTask = %+v", created)
	}
	if _, err := time.Parse(time.RFC3339Nano, created.CreatedAt); err != nil {
		t.Fatalf("createdAt %q: %v", created.CreatedAt, err)
	}
	id := strconv.FormatInt(created.ID, 10)
	var backlog task
	do(t, env, w, `mutation { createTask(summary: "Later") { id status agent { id } } }`, nil).ok(t).into(t, "createTask", &backlog)
	if backlog.Status != "Backlog" || backlog.Agent != nil {
		t.Fatalf("task without agent = %+v", backlog)
	}

	// Lists: filters and paging.
	var list []task
	do(t, env, w, `{ tasks { `+taskFields+` } }`, nil).ok(t).into(t, "tasks", &list)
	if len(list) != 2 || list[0].ID != created.ID || len(list[0].Steps) != 2 {
		t.Fatalf("tasks = %+v", list)
	}
	do(t, env, w, `{ tasks(status: Backlog) { id } }`, nil).ok(t).into(t, "tasks", &list)
	if len(list) != 1 || list[0].ID != backlog.ID {
		t.Fatalf("tasks(status: Backlog) = %+v", list)
	}
	do(t, env, w, `query($a: Int) { tasks(agentId: $a) { id } }`, map[string]any{"a": agent.ID}).ok(t).into(t, "tasks", &list)
	if len(list) != 1 || list[0].ID != created.ID {
		t.Fatalf("tasks(agentId) = %+v", list)
	}
	do(t, env, w, `{ tasks(first: 1, after: `+id+`) { id } }`, nil).ok(t).into(t, "tasks", &list)
	if len(list) != 1 || list[0].ID != backlog.ID {
		t.Fatalf("second page = %+v", list)
	}
	if r := do(t, env, w, `{ tasks(first: 0) { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("first: 0: %s", r.raw)
	}

	// Bad enum values: a literal fails validation, a variable fails coercion.
	if r := do(t, env, w, `{ tasks(status: Sleeping) { id } }`, nil); r.status != http.StatusBadRequest || r.code(t) != "invalid_argument" {
		t.Fatalf("bad enum literal: %d %s", r.status, r.raw)
	}
	if r := do(t, env, w, `query($s: TaskStatus) { tasks(status: $s) { id } }`, map[string]any{"s": "Sleeping"}); r.code(t) != "invalid_argument" {
		t.Fatalf("bad enum variable: %s", r.raw)
	}

	// Waiting, respond, and the conversation.
	var waiting task
	do(t, env, w, `mutation { setTaskStatus(id: `+id+`, status: Waiting, waitingDetails: "which branch?") { `+taskFields+` } }`, nil).
		ok(t).into(t, "setTaskStatus", &waiting)
	if waiting.Status != "Waiting" || waiting.WaitingDetails == nil || *waiting.WaitingDetails != "which branch?" || waiting.WaitingVersion != 1 {
		t.Fatalf("setTaskStatus = %+v", waiting)
	}
	if r := do(t, env, w, `mutation { respond(id: `+id+`, response: "main", waitingVersion: 7) { id } }`, nil); r.code(t) != "conflict" {
		t.Fatalf("stale waitingVersion: %s", r.raw)
	}
	// A new question while the task stays Waiting: an answer to the first one is stale.
	do(t, env, w, `mutation { setTaskStatus(id: `+id+`, status: Waiting, waitingDetails: "which remote?") { `+taskFields+` } }`, nil).
		ok(t).into(t, "setTaskStatus", &waiting)
	if waiting.WaitingVersion != 2 || *waiting.WaitingDetails != "which remote?" {
		t.Fatalf("a second question while Waiting = %+v, want waitingVersion 2", waiting)
	}
	if r := do(t, env, w, `mutation { respond(id: `+id+`, response: "main", waitingVersion: 1) { id } }`, nil); r.code(t) != "conflict" {
		t.Fatalf("an answer to the first question: %s", r.raw)
	}
	var answered task
	do(t, env, w, `mutation { respond(id: `+id+`, response: "main", waitingVersion: 2) { `+taskFields+` } }`, nil).ok(t).into(t, "respond", &answered)
	// The thread: the answer, which keeps the question it answered.
	if answered.Status != "Doing" || answered.WaitingDetails != nil || len(answered.Conversation) != 1 || answered.Conversation[0].Role != "user" ||
		answered.Conversation[0].Question == nil || *answered.Conversation[0].Question != "which remote?" {
		t.Fatalf("respond = %+v", answered)
	}
	if r := do(t, env, w, `mutation { respond(id: `+id+`, response: "again") { id } }`, nil); r.code(t) != "conflict" {
		t.Fatalf("respond to a task not Waiting: %s", r.raw)
	}
	var one task
	do(t, env, w, `{ task(id: `+id+`) { `+taskFields+` } }`, nil).ok(t).into(t, "task", &one)
	if len(one.Conversation) != 1 || one.Conversation[0].Content != "main" {
		t.Fatalf("task(id) = %+v", one)
	}

	// Steps and assignment.
	var stepped task
	do(t, env, w, `mutation { setStepStatus(id: `+id+`, step: 0, status: completed) { steps { index status } } }`, nil).ok(t).into(t, "setStepStatus", &stepped)
	if stepped.Steps[0].Status != "completed" {
		t.Fatalf("setStepStatus = %+v", stepped)
	}
	if r := do(t, env, w, `mutation { setStepStatus(id: `+id+`, step: 9, status: completed) { id } }`, nil); r.code(t) != "not_found" {
		t.Fatalf("unknown step: %s", r.raw)
	}
	var unassigned task
	// graphql-go v0.8.1 does not parse a null literal: null comes as a variable.
	do(t, env, w, `mutation($a: Int) { assignTask(id: `+id+`, agentId: $a) { agent { id } status } }`, map[string]any{"a": nil}).
		ok(t).into(t, "assignTask", &unassigned)
	if unassigned.Agent != nil || unassigned.Status != "Doing" {
		t.Fatalf("assignTask(null) = %+v", unassigned)
	}
	var reassigned task
	do(t, env, w, `mutation { assignTask(id: `+id+`, agentId: `+strconv.FormatInt(agent.ID, 10)+`) { agent { id name } status } }`, nil).
		ok(t).into(t, "assignTask", &reassigned)
	if reassigned.Agent == nil || reassigned.Agent.ID != agent.ID || reassigned.Status != "Doing" {
		t.Fatalf("assignTask(agent) = %+v", reassigned)
	}
	if r := do(t, env, w, `mutation { assignTask(id: `+id+`, agentId: 999) { id } }`, nil); r.code(t) == "" {
		t.Fatalf("assign to unknown agent: %s", r.raw)
	}

	// Unknown ids, scopes.
	if r := do(t, env, w, `{ task(id: 424242) { id } }`, nil); r.code(t) != "not_found" || r.Errors[0].Message == "" {
		t.Fatalf("unknown task: %s", r.raw)
	}
	if r := do(t, env, env.Token(t, pid, auth.TaskRead), `mutation { deleteTask(id: `+id+`) }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("delete without task:write: %s", r.raw)
	}
	other := env.NewProject(t, "Other")
	if r := do(t, env, env.Token(t, other.ID, auth.TaskRead), `{ task(id: `+id+`) { id } }`, nil); r.code(t) != "not_found" {
		t.Fatalf("task of another project: %s", r.raw)
	}

	// Deletes.
	do(t, env, w, `mutation { setTaskStatus(id: `+id+`, status: Done) { id } }`, nil).ok(t)
	var n int
	do(t, env, w, `mutation { deleteDoneTasks }`, nil).ok(t).into(t, "deleteDoneTasks", &n)
	if n != 1 {
		t.Fatalf("deleteDoneTasks = %d", n)
	}
	var deleted bool
	do(t, env, w, `mutation { deleteTask(id: `+strconv.FormatInt(backlog.ID, 10)+`) }`, nil).ok(t).into(t, "deleteTask", &deleted)
	if !deleted {
		t.Fatal("deleteTask = false")
	}
	if r := do(t, env, w, `mutation { deleteTask(id: `+id+`) }`, nil); r.code(t) != "not_found" {
		t.Fatalf("delete a deleted task: %s", r.raw)
	}
}

// gqlToken is a Token of the GraphQL API, as the tests ask for it.
type gqlToken struct {
	ID         int64
	Name, Type string
	Scopes     []string
	Token      *string
	CreatedAt  string
	ExpiresAt  *string
	LastUsedAt *string
	RevokedAt  *string
}

func TestTokens(t *testing.T) { pgtest.Engines(t, testTokens) }

func testTokens(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)

	var created gqlToken
	do(t, env, admin, `mutation { createPlatformToken(name: "ci", scopes: ["task:read"]) { id name type scopes token } }`, nil).
		ok(t).into(t, "createPlatformToken", &created)
	if created.Token == nil || !strings.HasPrefix(*created.Token, "adk_") || created.Type != "platform" || len(created.Scopes) != 1 {
		t.Fatalf("createPlatformToken = %+v", created)
	}
	// The new token works, and its use is recorded.
	do(t, env, *created.Token, `{ tasks { id } }`, nil).ok(t)

	var list []gqlToken
	do(t, env, admin, `{ tokens { id name type scopes token lastUsedAt revokedAt } }`, nil).ok(t).into(t, "tokens", &list)
	var found *gqlToken
	for i := range list {
		if list[i].Token != nil {
			t.Fatalf("tokens shows a value: %+v", list[i])
		}
		if list[i].ID == created.ID {
			found = &list[i]
		}
	}
	if found == nil || found.LastUsedAt == nil {
		t.Fatalf("tokens = %+v", list)
	}

	// Platform tokens never hold vector scopes, yet admins make data tokens (the web UI's
	// Tokens screen, issue 20): admin covers the data scopes. Without admin, no token at all.
	var data gqlToken
	do(t, env, admin, `mutation { createDataToken(name: "kb", scopes: ["vector:read", "vector:write"]) { id name type scopes token } }`, nil).
		ok(t).into(t, "createDataToken", &data)
	if data.Type != "data" || len(data.Scopes) != 2 || data.Token == nil {
		t.Fatalf("createDataToken by an admin = %+v", data)
	}
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/vector/spaces", Token: *data.Token}); r.Status != http.StatusOK {
		t.Fatalf("the data token on the vector endpoints: %d %s", r.Status, r.Body)
	}
	if r := do(t, env, env.Token(t, pid, auth.TaskRead, auth.TaskWrite), `mutation { createDataToken(name: "kb", scopes: ["vector:read"]) { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("createDataToken without admin: %s", r.raw)
	}
	if r := do(t, env, admin, `mutation { createDataToken(name: "kb", scopes: ["task:read"]) { type token } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("createDataToken with a platform scope: %s", r.raw)
	}

	if r := do(t, env, admin, `mutation { createPlatformToken(name: "x", scopes: ["root"]) { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("unknown scope: %s", r.raw)
	}
	// Only admins create tokens, and a caller cannot grant what it lacks.
	if r := do(t, env, env.Token(t, pid, auth.TaskRead), `mutation { createPlatformToken(name: "x", scopes: ["task:read"]) { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("without admin: %s", r.raw)
	}
	if r := do(t, env, env.Token(t, pid, auth.Admin), `mutation { createPlatformToken(name: "x", scopes: ["task:write"]) { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("granting a scope not held: %s", r.raw)
	}
	if r := do(t, env, admin, `mutation { createPlatformToken(name: "x") { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("missing scopes: %s", r.raw)
	}

	var revoked bool
	do(t, env, admin, `mutation { revokeToken(id: `+strconv.FormatInt(created.ID, 10)+`) }`, nil).ok(t).into(t, "revokeToken", &revoked)
	if r := do(t, env, *created.Token, `{ tasks { id } }`, nil); r.status != http.StatusUnauthorized || r.code(t) != "unauthenticated" {
		t.Fatalf("revoked token: %d %s", r.status, r.raw)
	}
	if r := do(t, env, admin, `mutation { revokeToken(id: 99999) }`, nil); r.code(t) != "not_found" {
		t.Fatalf("revoke unknown token: %s", r.raw)
	}
}

func TestConversations(t *testing.T) { pgtest.Engines(t, testConversations) }

func testConversations(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	env.Agent(t, pid, "helper")
	tok := env.Token(t, pid, allScopes...)

	type conv struct {
		ID           int64
		UUID         string
		Name         *string
		Participants []string
	}
	var c conv
	do(t, env, tok, `mutation { createConversation(message: "hello", name: "standup") { id uuid name participants } }`, nil).
		ok(t).into(t, "createConversation", &c)
	if c.ID == 0 || c.UUID == "" || c.Name == nil || *c.Name != "standup" || len(c.Participants) != 1 {
		t.Fatalf("createConversation = %+v", c)
	}
	cid := strconv.FormatInt(c.ID, 10)

	var msg struct {
		ID      int64
		Content string
	}
	do(t, env, tok, `mutation($c: ID!) { postMessage(conversationId: $c, message: "second") { id content } }`,
		map[string]any{"c": c.UUID}).ok(t).into(t, "postMessage", &msg)
	mid := strconv.FormatInt(msg.ID, 10)
	do(t, env, tok, `mutation { addReaction(messageId: `+mid+`, emoji: "👍") { id } }`, nil).ok(t)

	var msgs []struct {
		Content   string
		Reactions []struct {
			Emoji string
			Count int
		}
	}
	do(t, env, tok, `{ messages(conversationId: `+cid+`) { content author authorType createdAt reactions { emoji count } } }`, nil).
		ok(t).into(t, "messages", &msgs)
	if len(msgs) != 2 || msgs[0].Content != "hello" || len(msgs[1].Reactions) != 1 || msgs[1].Reactions[0].Count != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	var reactions []struct{ Emoji, Actor string }
	do(t, env, tok, `{ reactions(messageId: `+mid+`) { emoji actor } }`, nil).ok(t).into(t, "reactions", &reactions)
	if len(reactions) != 1 {
		t.Fatalf("reactions = %+v", reactions)
	}
	do(t, env, tok, `mutation { removeReaction(messageId: `+mid+`, emoji: "👍") { reactions { count } } }`, nil).ok(t)

	do(t, env, tok, `mutation { addParticipant(conversationId: `+cid+`, kind: "agent", name: "helper") { participants } }`, nil).
		ok(t).into(t, "addParticipant", &c)
	if len(c.Participants) != 2 {
		t.Fatalf("addParticipant = %+v", c)
	}
	var parts []struct{ Kind, Name string }
	do(t, env, tok, `{ participants(conversationId: `+cid+`) { kind name agentId } }`, nil).ok(t).into(t, "participants", &parts)
	if len(parts) != 2 || parts[1].Kind != "agent" {
		t.Fatalf("participants = %+v", parts)
	}
	do(t, env, tok, `mutation { removeParticipant(conversationId: `+cid+`, kind: "agent", name: "helper") { participants } }`, nil).
		ok(t).into(t, "removeParticipant", &c)
	if len(c.Participants) != 1 {
		t.Fatalf("removeParticipant = %+v", c)
	}
	if r := do(t, env, tok, `mutation { addParticipant(conversationId: `+cid+`, kind: "robot", name: "x") { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("bad participant kind: %s", r.raw)
	}

	var convs []struct {
		conv
		Unread, LastReadMessageID *int64
	}
	do(t, env, tok, `{ conversations(first: 10) { id uuid name participants createdAt unread lastReadMessageId } }`, nil).ok(t).into(t, "conversations", &convs)
	// The caller wrote every message, so read them all (service tests count unread ones).
	if len(convs) != 1 || convs[0].Unread == nil || *convs[0].Unread != 0 || convs[0].LastReadMessageID == nil || *convs[0].LastReadMessageID == 0 {
		t.Fatalf("conversations = %+v", convs)
	}
	do(t, env, tok, `{ conversation(id: "`+c.UUID+`") { id } }`, nil).ok(t).into(t, "conversation", &c)
	var docs []struct{ ID int64 }
	do(t, env, tok, `{ documents(conversationId: `+cid+`) { id name mimeType size url } }`, nil).ok(t).into(t, "documents", &docs)
	if len(docs) != 0 {
		t.Fatalf("documents = %+v", docs)
	}

	// Tasks linked to the conversation.
	do(t, env, tok, `mutation { createTask(summary: "linked", conversationId: `+cid+`) { id } }`, nil).ok(t)
	do(t, env, tok, `mutation { createTask(summary: "unlinked") { id } }`, nil).ok(t)
	var linked []struct{ Summary string }
	do(t, env, tok, `{ tasks(conversationId: `+cid+`) { summary } }`, nil).ok(t).into(t, "tasks", &linked)
	if len(linked) != 1 || linked[0].Summary != "linked" {
		t.Fatalf("tasks(conversationId) = %+v", linked)
	}

	if r := do(t, env, tok, `{ conversation(id: 987654) { id } }`, nil); r.code(t) != "not_found" {
		t.Fatalf("unknown conversation: %s", r.raw)
	}
	if r := do(t, env, tok, `{ messages(conversationId: 987654) { id } }`, nil); r.code(t) != "not_found" {
		t.Fatalf("messages of unknown conversation: %s", r.raw)
	}
	if r := do(t, env, env.Token(t, pid, auth.TaskRead), `{ conversations { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("conversations without messaging:read: %s", r.raw)
	}
}

func TestLimits(t *testing.T) { pgtest.Engines(t, testLimits) }

func testLimits(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, allScopes...)

	// A refused query is refused before anything runs: it costs the store no more
	// queries than authenticating a trivial one does (a count, not a timing, so that a
	// busy machine cannot fail it; the time is logged).
	store := env.Service.Store()
	do(t, env, tok, `{ __typename }`, nil).ok(t) // the token is cached from now on
	q0 := store.ReadQueries()
	do(t, env, tok, `{ __typename }`, nil).ok(t)
	auth := store.ReadQueries() - q0
	check := func(name, query string, vars map[string]any, status int, code, text string) {
		t.Helper()
		start, before := time.Now(), store.ReadQueries()
		r := do(t, env, tok, query, vars)
		if r.status != status || r.code(t) != code || !strings.Contains(r.Errors[0].Message, text) {
			t.Fatalf("%s: %d %s", name, r.status, r.raw)
		}
		if ran := store.ReadQueries() - before; ran > auth { // more would be a resolver; fewer, a background read in the baseline
			t.Errorf("%s: %d store queries before the refusal; authentication alone takes %d", name, ran, auth)
		}
		t.Logf("%s refused in %v", name, time.Since(start))
	}

	deep := strings.Repeat("{ __type(name: \"Task\") { ofType ", 1) + strings.Repeat("{ ofType ", 48) + "{ name" + strings.Repeat(" }", 51)
	check("50 deep", deep, nil, http.StatusBadRequest, "invalid_argument", "too deep")
	check("deep unknown fields", "{"+strings.Repeat(" a {", 60)+" b"+strings.Repeat(" }", 61), nil, http.StatusBadRequest, "invalid_argument", "too deep")

	check("explosion", `{ tasks(first: 1000) { id steps { title status } } }`, nil, http.StatusBadRequest, "invalid_argument", "too expensive")
	check("explosion by variable", `query($n: Int) { tasks(first: $n) { id steps { title } } }`, map[string]any{"n": 1000},
		http.StatusBadRequest, "invalid_argument", "too expensive")
	// Variable defaults and coerced values count (#16.3): the issue's query, with aliases.
	issue := `query($n: Int = 1000) { a: tasks(first: $n) { id steps { title } } b: tasks(first: $n) { id steps { title } }
		c: tasks(first: $n) { id steps { title } } d: tasks(first: $n) { id steps { title } } }`
	check("variable default", issue, nil, http.StatusBadRequest, "invalid_argument", "too expensive")
	check("variable default alone", `query($n: Int = 1000) { tasks(first: $n) { id steps { title } } }`, nil, http.StatusBadRequest, "invalid_argument", "too expensive")
	check("null variable takes the default", `query($n: Int = 1000) { tasks(first: $n) { id steps { title } } }`, map[string]any{"n": nil},
		http.StatusBadRequest, "invalid_argument", "too expensive")
	check("variable coerced from a string", `query($n: Int) { tasks(first: $n) { id steps { title } } }`, map[string]any{"n": "1000"},
		http.StatusBadRequest, "invalid_argument", "too expensive")
	// A task has up to 500 steps: three default pages of tasks with their steps are too many.
	check("steps at 500", `{ a: tasks { steps { title } } b: tasks { steps { title } } c: tasks { steps { title } } }`, nil,
		http.StatusBadRequest, "invalid_argument", "too expensive")
	check("unpaged lists at their cap", `{ a: jobs { steps } b: jobs { steps } c: jobs { steps } d: jobs { steps } e: jobs { steps } f: jobs { steps } }`, nil,
		http.StatusBadRequest, "invalid_argument", "too expensive")

	// Literals nest at most 8 levels, refused before validation, which is slow on them
	// (#16.2): this one kept a core busy for minutes.
	deepList := `{ tasks(status: ` + strings.Repeat("[", 5000) + "Todo" + strings.Repeat("]", 5000) + `) { id } }`
	check("deep list literal", deepList, nil, http.StatusBadRequest, "invalid_argument", "more than 8 levels deep")
	check("deep object literal", `mutation { createTask(summary: "x", steps: `+strings.Repeat("{title: ", 20)+`"t"`+strings.Repeat("}", 20)+`) { id } }`, nil,
		http.StatusBadRequest, "invalid_argument", "more than 8 levels deep")
	check("deep variable default", `query($s: TaskStatus = `+strings.Repeat("[", 100)+"Todo"+strings.Repeat("]", 100)+`) { tasks(status: $s) { id } }`, nil,
		http.StatusBadRequest, "invalid_argument", "more than 8 levels deep")
	check("deep directive argument", `{ tasks @include(if: `+strings.Repeat("[", 100)+"true"+strings.Repeat("]", 100)+`) { id } }`, nil,
		http.StatusBadRequest, "invalid_argument", "more than 8 levels deep")
	if r := do(t, env, tok, `{ tasks(status: `+strings.Repeat("[", 8)+"Todo"+strings.Repeat("]", 8)+`) { id } }`, nil); r.status != http.StatusBadRequest ||
		strings.Contains(r.raw, "levels deep") || !strings.Contains(r.raw, "invalid value") {
		t.Errorf("8 levels are left to validation: %d %s", r.status, r.raw)
	}
	// Validation costs graphql-go tens of microseconds a node, and it compares every pair
	// of fields sharing a response name by printing their arguments: both are bounded
	// before it runs (these took seconds).
	sameName := "{" + strings.Repeat(" a: tasks(status: ["+strings.Repeat("Todo,", 19)+"Todo]) { id }", 60) + " }"
	check("same response name with arguments", sameName, nil, http.StatusBadRequest, "invalid_argument", "give them distinct aliases")
	check("many nodes", `mutation { createTask(summary: "x", steps: [`+strings.Repeat(`{title: "t", x: 1}, `, 1000)+`]) { id } }`, nil,
		http.StatusBadRequest, "invalid_argument", "nodes")
	check("many arguments", `{ viewer(`+strings.Repeat(`x: 1, `, 4000)+`) { kind } }`, nil, http.StatusBadRequest, "invalid_argument", "nodes")
	// 500 steps written inline still fit.
	if r := do(t, env, tok, `mutation { createTask(summary: "x", steps: [`+strings.Repeat(`{title: "t"}, `, 500)+`]) { steps { index } } }`, nil); r.status != http.StatusOK {
		t.Errorf("500 steps inline: %d %.300s", r.status, r.raw)
	}

	check("type definitions", `type Evil { f(a: Int = `+strings.Repeat("[", 100)+"1"+strings.Repeat("]", 100)+`): Int } { viewer { kind } }`, nil,
		http.StatusBadRequest, "invalid_argument", "only operations and fragments")

	check("aliases", `{ `+strings.Repeat("a: tasks { id steps { title } } ", 1)+strings.Repeat("b: tasks(first: 500) { steps { title } } ", 3)+` }`, nil,
		http.StatusBadRequest, "invalid_argument", "too expensive")
	// Fragments are expanded once each, whatever the fan-out.
	var frags strings.Builder
	frags.WriteString(`{ ...F0 } `)
	for i := range 30 {
		frags.WriteString("fragment F" + strconv.Itoa(i) + " on Query { tasks { id } ...F" + strconv.Itoa(i+1) + " ...F" + strconv.Itoa(i+1) + " } ")
	}
	frags.WriteString("fragment F30 on Query { projects { id } }")
	check("fragment fan-out", frags.String(), nil, http.StatusBadRequest, "invalid_argument", "too expensive")
	check("fragment cycle", `{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`, nil, http.StatusBadRequest, "invalid_argument", "spreads itself")

	check("many fields", "{"+strings.Repeat(" __typename", 5000)+" }", nil, http.StatusBadRequest, "invalid_argument", "fields, at most")

	big := "{ projects { id } }" + strings.Repeat(" ", agql.MaxQueryBytes)
	check("size", big, nil, http.StatusRequestEntityTooLarge, "payload_too_large", "at most")

	// Reasonable queries pass: a page of tasks with steps, and the usual introspection.
	do(t, env, tok, `{ tasks(first: 100) { id summary steps { index title status } agent { id name } } }`, nil).ok(t)
	do(t, env, tok, introspectionQuery, nil).ok(t)

	// A syntax error is a bad request.
	if r := do(t, env, tok, `query($s: TaskStatus) { tasks(status: $s) { id } }`, map[string]any{"s": "Nope"}); r.status != http.StatusBadRequest {
		t.Fatalf("bad variable: %d %s", r.status, r.raw)
	}
	check("syntax", `{ tasks { id `, nil, http.StatusBadRequest, "invalid_argument", "Syntax Error")
}

func TestHTTP(t *testing.T) { pgtest.Engines(t, testHTTP) }

func testHTTP(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, allScopes...)

	// With the UI built into the binary, the page is GraphiQL (its bundle from /assets/,
	// no inline script); without it, the plain form.
	page := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/graphql", Header: http.Header{"Accept": {"text/html,application/xhtml+xml"}}})
	want := "<form"
	if frontend.Built() {
		want = `src="/assets/graphiql-`
		if page.Header.Get("Content-Security-Policy") != agql.GraphiQLCSP || regexp.MustCompile(`<script>|<script type="module">`).Match(page.Body) {
			t.Errorf("GraphiQL page: CSP %q, inline script in %s", page.Header.Get("Content-Security-Policy"), page.Body)
		}
	}
	if page.Status != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(page.Body), want) || strings.Contains(string(page.Body), "https://") {
		t.Fatalf("GET /graphql page: %d %s %s", page.Status, page.Header, page.Body)
	}

	get := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/graphql?query=%7B%20projects%20%7B%20id%20%7D%20%7D", Token: tok})
	if get.Status != http.StatusOK || !strings.Contains(string(get.Body), env.Project.ID) {
		t.Fatalf("GET query: %d %s", get.Status, get.Body)
	}
	mut := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/graphql?query=mutation%20%7B%20deleteDoneTasks%20%7D", Token: tok})
	if mut.Status != http.StatusMethodNotAllowed || !strings.Contains(string(mut.Body), "mutations must be sent with POST") {
		t.Fatalf("GET mutation: %d %s", mut.Status, mut.Body)
	}

	bad := env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/graphql", Token: tok, Body: "{not json"})
	if bad.Status != http.StatusBadRequest || !strings.Contains(string(bad.Body), "invalid_argument") {
		t.Fatalf("bad JSON: %d %s", bad.Status, bad.Body)
	}

	// Named operations.
	var r result
	resp := env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/graphql", Token: tok, Body: map[string]any{
		"query": `query A { projects { id } } query B { agents { id } }`, "operationName": "B"}})
	resp.JSON(t, &r)
	if _, ok := r.Data["agents"]; !ok || len(r.Errors) != 0 {
		t.Fatalf("operationName: %s", resp.Body)
	}
}

func TestSchemaFileIsUpToDate(t *testing.T) {
	schema, err := agql.NewSchema(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	if got := agql.PrintSchema(&schema); got != string(want) {
		t.Fatal("schema.graphql is stale: run `go generate ./backend/graphql` and commit the result")
	}
	if again := agql.PrintSchema(&schema); again != agql.PrintSchema(&schema) {
		t.Fatal("PrintSchema is not deterministic")
	}
}

// introspectionQuery is GraphiQL's usual introspection query.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }
}`

func TestViewer(t *testing.T) { pgtest.Engines(t, testViewer) }

func testViewer(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, auth.TaskRead, auth.MessagingRead)
	var v struct {
		Kind, Name, ProjectID string
		Scopes                []string
	}
	do(t, env, tok, `{ viewer { kind name projectId scopes } }`, nil).ok(t).into(t, "viewer", &v)
	if v.Kind != "token" || v.ProjectID != env.Project.ID || strings.Join(v.Scopes, ",") != "messaging:read,task:read" || v.Name == "" {
		t.Errorf("viewer = %+v", v)
	}
	if r := do(t, env, "", `{ viewer { kind } }`, nil); r.status != http.StatusUnauthorized && r.code(t) != "unauthenticated" {
		t.Errorf("viewer without credentials: %d %s", r.status, r.raw)
	}
}
