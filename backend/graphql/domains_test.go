package graphql_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	agql "github.com/agentdesk/agentdesk/backend/graphql"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

type member struct {
	UserID       int64
	Name         string
	Email        *string
	Role         string
	Scopes       []string
	IsLocalOwner bool
}

const memberFields = `userId name email role scopes isLocalOwner createdAt updatedAt`

func TestMembers(t *testing.T) { pgtest.Engines(t, testMembers) }

func testMembers(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)
	viewer := env.Token(t, pid, auth.TaskRead)

	var list []member
	do(t, env, viewer, `{ members { `+memberFields+` } }`, nil).ok(t).into(t, "members", &list)
	if len(list) != 1 || list[0].Role != "owner" || !list[0].IsLocalOwner || len(list[0].Scopes) != 5 {
		t.Fatalf("members = %+v", list)
	}
	owner := list[0]

	var ann member
	do(t, env, admin, `mutation { addMember(email: "ann@example.com", role: member) { `+memberFields+` } }`, nil).ok(t).into(t, "addMember", &ann)
	if ann.Name != "ann" || ann.Email == nil || *ann.Email != "ann@example.com" || ann.Role != "member" ||
		strings.Join(ann.Scopes, ",") != "task:read,task:write,messaging:read,messaging:write" {
		t.Fatalf("addMember = %+v", ann)
	}
	var bob member
	do(t, env, admin, `mutation { addMember(name: "Bob", role: viewer) { `+memberFields+` } }`, nil).ok(t).into(t, "addMember", &bob)
	if bob.Email != nil || bob.Role != "viewer" || bob.Name != "Bob" {
		t.Fatalf("addMember by name = %+v", bob)
	}
	var changed member
	do(t, env, admin, `mutation($u: Int!) { setMemberRole(userId: $u, role: admin) { `+memberFields+` } }`, map[string]any{"u": bob.UserID}).
		ok(t).into(t, "setMemberRole", &changed)
	if changed.Role != "admin" || changed.UserID != bob.UserID {
		t.Fatalf("setMemberRole = %+v", changed)
	}
	var removed bool
	do(t, env, admin, `mutation($u: Int!) { removeMember(userId: $u) }`, map[string]any{"u": bob.UserID}).ok(t).into(t, "removeMember", &removed)
	do(t, env, viewer, `{ members { userId } }`, nil).ok(t).into(t, "members", &list)
	if !removed || len(list) != 2 || list[1].UserID != ann.UserID {
		t.Fatalf("after removeMember: %v %+v", removed, list)
	}

	errCases := []struct {
		name, token, query, code, text string
	}{
		{"duplicate", admin, `mutation { addMember(email: "ANN@example.com", role: viewer) { userId } }`, "conflict", "already a member"},
		{"bad email", admin, `mutation { addMember(email: "not an email", role: viewer) { userId } }`, "invalid_argument", "not a valid email"},
		{"nobody", admin, `mutation { addMember(role: viewer) { userId } }`, "invalid_argument", "email or name"},
		{"bad role", admin, `mutation { addMember(name: "x", role: root) { userId } }`, "invalid_argument", ""},
		{"owner by a token", admin, `mutation { addMember(name: "x", role: owner) { userId } }`, "forbidden", "only an owner"},
		{"not admin", env.Token(t, pid, auth.TaskRead, auth.TaskWrite), `mutation { addMember(name: "x", role: viewer) { userId } }`, "forbidden", "admin"},
		{"unknown user", admin, `mutation { setMemberRole(userId: 9999, role: viewer) { userId } }`, "not_found", "not a member"},
		{"last owner demoted", admin, `mutation { setMemberRole(userId: ` + strconv.FormatInt(owner.UserID, 10) + `, role: admin) { userId } }`, "conflict", "last owner"},
		{"last owner removed", admin, `mutation { removeMember(userId: ` + strconv.FormatInt(owner.UserID, 10) + `) }`, "conflict", "last owner"},
		{"no scope", env.TypedToken(t, pid, "data", auth.VectorRead), `{ members { userId } }`, "forbidden", ""},
	}
	for _, tc := range errCases {
		r := do(t, env, tc.token, tc.query, nil)
		if r.code(t) != tc.code || !strings.Contains(r.Errors[0].Message, tc.text) {
			t.Errorf("%s: %s", tc.name, r.raw)
		}
	}
	// Another project's admin sees only its own members and cannot touch ours.
	other := env.NewProject(t, "Other")
	otherAdmin := env.Token(t, other.ID, allScopes...)
	do(t, env, otherAdmin, `{ members { userId } }`, nil).ok(t).into(t, "members", &list)
	if len(list) != 1 || list[0].UserID != owner.UserID {
		t.Fatalf("other project's members = %+v", list)
	}
	if r := do(t, env, otherAdmin, `mutation($u: Int!) { removeMember(userId: $u) }`, map[string]any{"u": ann.UserID}); r.code(t) != "not_found" {
		t.Fatalf("remove a member of another project: %s", r.raw)
	}
}

func TestAgentProfileAndDelete(t *testing.T) { pgtest.Engines(t, testAgentProfileAndDelete) }

func testAgentProfileAndDelete(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)
	agent := env.Agent(t, pid, "builder")
	aid := strconv.FormatInt(agent.ID, 10)

	type agentT struct {
		ID                             int64
		Name, DisplayName, Description string
	}
	var a agentT
	do(t, env, admin, `{ agents { id name displayName description } }`, nil).ok(t)
	do(t, env, admin, `mutation { updateAgent(id: `+aid+`, displayName: "The Builder", description: "Builds things") { id name displayName description } }`, nil).
		ok(t).into(t, "updateAgent", &a)
	if a.Name != "builder" || a.DisplayName != "The Builder" || a.Description != "Builds things" {
		t.Fatalf("updateAgent = %+v", a)
	}
	// Left out: unchanged; empty: cleared (displayName falls back to the name).
	do(t, env, admin, `mutation { updateAgent(id: `+aid+`, displayName: "") { id name displayName description } }`, nil).ok(t).into(t, "updateAgent", &a)
	if a.DisplayName != "builder" || a.Description != "Builds things" {
		t.Fatalf("updateAgent partial = %+v", a)
	}
	for name, q := range map[string]string{
		"unknown":  `mutation { updateAgent(id: 999, description: "x") { id } }`,
		"too long": `mutation { updateAgent(id: ` + aid + `, displayName: "` + strings.Repeat("x", 201) + `") { id } }`,
	} {
		want := map[string]string{"unknown": "not_found", "too long": "invalid_argument"}[name]
		if r := do(t, env, admin, q, nil); r.code(t) != want {
			t.Errorf("%s: %s", name, r.raw)
		}
	}
	if r := do(t, env, env.Token(t, pid, auth.TaskRead, auth.TaskWrite), `mutation { updateAgent(id: `+aid+`, description: "x") { id } }`, nil); r.code(t) != "forbidden" {
		t.Errorf("updateAgent without admin: %s", r.raw)
	}

	// The agent's headers authenticate (and are now cached: deletion must undo that).
	if r := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/api/projects/" + pid + "/tasks", Header: env.AgentHeaders(t, pid, "builder")}); r.Status != http.StatusOK {
		t.Fatalf("agent headers before deletion: %d %s", r.Status, r.Body)
	}

	// Delete: its tasks become unassigned, with their events, in the same change.
	var task struct {
		ID     int64
		Status string
		Agent  *struct{ ID int64 }
	}
	do(t, env, admin, `mutation { createTask(summary: "assigned", agentId: `+aid+`) { id status agent { id } } }`, nil).ok(t).into(t, "createTask", &task)
	c := connect(t, env, admin)
	c.subscribe("s", taskChangedQuery, nil)
	c.sync()
	var deleted bool
	do(t, env, admin, `mutation { deleteAgent(id: `+aid+`) }`, nil).ok(t).into(t, "deleteAgent", &deleted)
	ch := c.change("s")
	if !deleted || ch.Kind != "updated" || ch.Task == nil || ch.Task.ID != task.ID || ch.Task.Agent != nil || ch.Task.Status != "Todo" {
		t.Fatalf("deleteAgent: %v %+v", deleted, ch)
	}
	do(t, env, admin, `{ task(id: `+strconv.FormatInt(task.ID, 10)+`) { id status agent { id } } }`, nil).ok(t).into(t, "task", &task)
	if task.Agent != nil || task.Status != "Todo" {
		t.Fatalf("task after deleteAgent = %+v", task)
	}
	var agents []agentT
	do(t, env, admin, `{ agents { id } }`, nil).ok(t).into(t, "agents", &agents)
	if len(agents) != 0 {
		t.Fatalf("agents after delete = %+v", agents)
	}
	if r := do(t, env, admin, `mutation { deleteAgent(id: `+aid+`) }`, nil); r.code(t) != "not_found" {
		t.Fatalf("delete again: %s", r.raw)
	}
	// The agent's headers no longer authenticate.
	r := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/api/projects/" + pid + "/tasks", Header: env.AgentHeaders(t, pid, "builder")})
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("deleted agent's headers: %d %s", r.Status, r.Body)
	}
}

func TestRotateToken(t *testing.T) { pgtest.Engines(t, testRotateToken) }

func testRotateToken(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)
	const fields = `id name type scopes token createdAt expiresAt revokedAt`
	var old gqlToken
	expires := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	do(t, env, admin, `mutation($e: String) { createPlatformToken(name: "ci", scopes: ["task:read", "messaging:read"], expiresAt: $e) { `+fields+` } }`,
		map[string]any{"e": expires}).ok(t).into(t, "createPlatformToken", &old)
	do(t, env, *old.Token, `{ tasks { id } }`, nil).ok(t)

	var fresh gqlToken
	do(t, env, admin, `mutation($id: Int!) { rotateToken(id: $id) { `+fields+` } }`, map[string]any{"id": old.ID}).ok(t).into(t, "rotateToken", &fresh)
	if fresh.ID == old.ID || fresh.Token == nil || *fresh.Token == *old.Token || fresh.Name != "ci" || fresh.Type != "platform" ||
		strings.Join(fresh.Scopes, ",") != strings.Join(old.Scopes, ",") || fresh.ExpiresAt == nil || fresh.RevokedAt != nil {
		t.Fatalf("rotateToken = %+v (old %+v)", fresh, old)
	}
	oldLife := mustTime(t, *old.ExpiresAt).Sub(mustTime(t, old.CreatedAt))
	newLife := mustTime(t, *fresh.ExpiresAt).Sub(mustTime(t, fresh.CreatedAt))
	if oldLife != newLife {
		t.Fatalf("lifetime %v, want %v", newLife, oldLife)
	}
	if r := do(t, env, *old.Token, `{ tasks { id } }`, nil); r.status != http.StatusUnauthorized || !strings.Contains(r.Errors[0].Message, "revoked") {
		t.Fatalf("old token after rotation: %d %s", r.status, r.raw)
	}
	do(t, env, *fresh.Token, `{ tasks { id } }`, nil).ok(t)
	var list []gqlToken
	do(t, env, admin, `{ tokens { `+fields+` } }`, nil).ok(t).into(t, "tokens", &list)
	for _, tk := range list {
		if tk.Token != nil {
			t.Fatalf("tokens shows a value: %+v", tk)
		}
	}

	if r := do(t, env, admin, `mutation($id: Int!) { rotateToken(id: $id) { id } }`, map[string]any{"id": old.ID}); r.code(t) != "conflict" {
		t.Errorf("rotate a revoked token: %s", r.raw)
	}
	if r := do(t, env, admin, `mutation { rotateToken(id: 9999) { id } }`, nil); r.code(t) != "not_found" {
		t.Errorf("rotate an unknown token: %s", r.raw)
	}
	if r := do(t, env, env.Token(t, pid, auth.TaskRead), `mutation($id: Int!) { rotateToken(id: $id) { id } }`, map[string]any{"id": fresh.ID}); r.code(t) != "forbidden" {
		t.Errorf("rotate without admin: %s", r.raw)
	}
	// A caller cannot mint scopes it lacks by rotating: admin alone cannot rotate a task:read token.
	if r := do(t, env, env.Token(t, pid, auth.Admin), `mutation($id: Int!) { rotateToken(id: $id) { id } }`, map[string]any{"id": fresh.ID}); r.code(t) != "forbidden" {
		t.Errorf("rotate a token with scopes the caller lacks: %s", r.raw)
	}
	other := env.NewProject(t, "Other")
	if r := do(t, env, env.Token(t, other.ID, allScopes...), `mutation($id: Int!) { rotateToken(id: $id) { id } }`, map[string]any{"id": fresh.ID}); r.code(t) != "not_found" {
		t.Errorf("rotate another project's token: %s", r.raw)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestListsCostFixedQueries proves that lists do not make one query per row: the same
// query over 5 and over 60 tasks (each with steps and an agent whose profile is asked
// for), and over 5 and 60 messages with reactions, runs the same number of store queries.
func TestListsCostFixedQueries(t *testing.T) { pgtest.Engines(t, testListsCostFixedQueries) }

func testListsCostFixedQueries(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	tok := env.Token(t, pid, allScopes...)
	st := env.Service.Store()
	var agents []int64
	for i := range 3 {
		agents = append(agents, env.Agent(t, pid, "agent"+strconv.Itoa(i)).ID)
	}
	var convID int64
	var conv struct{ ID int64 }
	do(t, env, tok, `mutation { createConversation(message: "m0") { id } }`, nil).ok(t).into(t, "createConversation", &conv)
	convID = conv.ID

	grow := func(tasks, messages int) {
		for i := range tasks {
			do(t, env, tok, `mutation($a: Int) { createTask(summary: "t", steps: [{title: "a"}, {title: "b"}], agentId: $a) { id } }`,
				map[string]any{"a": agents[i%len(agents)]}).ok(t)
		}
		for range messages {
			var m struct{ ID int64 }
			do(t, env, tok, `mutation($c: ID!) { postMessage(conversationId: $c, message: "hi") { id } }`, map[string]any{"c": strconv.FormatInt(convID, 10)}).
				ok(t).into(t, "postMessage", &m)
			do(t, env, tok, `mutation($m: Int!) { addReaction(messageId: $m, emoji: "👍") { id } }`, map[string]any{"m": m.ID}).ok(t)
		}
	}
	queries := func(query string, vars map[string]any) (int64, json.RawMessage) {
		// Nothing subscribes here, so the event hub reads nothing, and the background runner's
		// reads are not counted (store.ReadQueries): every read counted is the request's.
		before := st.ReadQueries()
		r := do(t, env, tok, query, vars).ok(t)
		n := st.ReadQueries() - before
		for _, v := range r.Data {
			return n, v
		}
		return n, nil
	}
	tasksQuery := `{ tasks(first: 100) { id steps { title status } agent { id name displayName description } } }`
	messagesQuery := `query($c: ID!) { messages(conversationId: $c, first: 100) { id content reactions { emoji count } } }`
	vars := map[string]any{"c": strconv.FormatInt(convID, 10)}

	grow(5, 4)
	fewTasks, data := queries(tasksQuery, nil)
	if !strings.Contains(string(data), `"displayName":"agent1"`) {
		t.Fatalf("tasks = %s", data)
	}
	fewMessages, _ := queries(messagesQuery, vars)
	grow(55, 55)
	manyTasks, data := queries(tasksQuery, nil)
	if strings.Count(string(data), `"steps"`) != 60 {
		t.Fatalf("want 60 tasks: %s", data)
	}
	manyMessages, data := queries(messagesQuery, vars)
	if strings.Count(string(data), `"count":1`) != 59 {
		t.Fatalf("want 59 reacted messages: %s", data)
	}
	if fewTasks != manyTasks || manyTasks > 5 {
		t.Errorf("tasks: %d queries for 5 tasks, %d for 60", fewTasks, manyTasks)
	}
	if fewMessages != manyMessages || manyMessages > 5 {
		t.Errorf("messages: %d queries for 5 messages, %d for 60", fewMessages, manyMessages)
	}
	t.Logf("store queries: tasks %d, messages %d (authentication included)", manyTasks, manyMessages)
}

// TestLimitsMillionNodes: a query asking for a million nodes is refused before it runs,
// over HTTP and over WebSocket.
func TestLimitsMillionNodes(t *testing.T) { pgtest.Engines(t, testLimitsMillionNodes) }

func testLimitsMillionNodes(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, allScopes...)
	var q strings.Builder
	q.WriteString("{")
	for i := range 100 { // 100 x 1000 tasks x 500 steps = 5 x 10^7 steps
		q.WriteString(" a" + strconv.Itoa(i) + ": tasks(first: 1000) { steps { title } }")
	}
	q.WriteString(" }")
	store := env.Service.Store()
	do(t, env, tok, `{ __typename }`, nil).ok(t) // the token is cached from now on
	q0 := store.ReadQueries()
	do(t, env, tok, `{ __typename }`, nil).ok(t)
	auth := store.ReadQueries() - q0 // what authentication alone costs the store
	start, before := time.Now(), store.ReadQueries()
	r := do(t, env, tok, q.String(), nil)
	if r.status != http.StatusBadRequest || r.code(t) != "invalid_argument" || !strings.Contains(r.Errors[0].Message, "too expensive") ||
		!strings.Contains(r.Errors[0].Message, "at most "+strconv.Itoa(agql.MaxCost)) {
		t.Fatalf("a million nodes: %d %s", r.status, r.raw)
	}
	if ran := store.ReadQueries() - before; ran > auth { // refused before any resolver ran (the baseline may hold a background read)
		t.Errorf("%d store queries before the refusal; authentication alone takes %d", ran, auth)
	}
	t.Logf("a million nodes refused in %v", time.Since(start))
	c := connect(t, env, tok)
	c.subscribe("big", strings.Replace(q.String(), "{", "query {", 1), nil)
	if m := c.read(); m.Type != "error" || !strings.Contains(string(m.Payload), "too expensive") {
		t.Fatalf("over ws: %+v %s", m, m.Payload)
	}
}
