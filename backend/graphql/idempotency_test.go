package graphql_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestIdempotencyKey: createTask, respond, createConversation and sendMessage take
// idempotencyKey with REST's Idempotency-Key semantics: the same key and arguments give
// the first answer again and change nothing; other arguments are a conflict.
func TestIdempotencyKey(t *testing.T) { pgtest.Engines(t, testIdempotencyKey) }

func testIdempotencyKey(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	agent := env.Agent(t, pid, "builder")
	tok := env.Token(t, pid, allScopes...)

	// same runs the mutation twice and checks both answers are the same.
	same := func(name, query string, vars map[string]any) json.RawMessage {
		t.Helper()
		first := do(t, env, tok, query, vars).ok(t)
		again := do(t, env, tok, query, vars).ok(t)
		if string(first.Data[name]) != string(again.Data[name]) {
			t.Fatalf("%s replayed differently:\n%s\n%s", name, first.Data[name], again.Data[name])
		}
		return first.Data[name]
	}
	conflict := func(name, query string, vars map[string]any) {
		t.Helper()
		if r := do(t, env, tok, query, vars); r.code(t) != "conflict" || r.Data[name] != nil && string(r.Data[name]) != "null" {
			t.Fatalf("%s with the key of other arguments: %s", name, r.raw)
		}
	}

	const create = `mutation($s: String!, $k: String, $a: Int) { createTask(summary: $s, agentId: $a, steps: [{title: "one"}], idempotencyKey: $k) {
		id summary status steps { index title status } agent { id name } waitingVersion createdAt updatedAt } }`
	raw := same("createTask", create, map[string]any{"s": "ship", "k": "task-1", "a": agent.ID})
	var task struct{ ID int64 }
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatal(err)
	}
	conflict("createTask", create, map[string]any{"s": "ship it", "k": "task-1", "a": agent.ID})
	var tasks []struct{ ID int64 }
	do(t, env, tok, `{ tasks { id } }`, nil).ok(t).into(t, "tasks", &tasks)
	if len(tasks) != 1 {
		t.Fatalf("one task expected after a retried createTask: %+v", tasks)
	}
	// Without a key, every call creates.
	do(t, env, tok, create, map[string]any{"s": "ship"}).ok(t)
	do(t, env, tok, create, map[string]any{"s": "ship"}).ok(t)

	id := strconv.FormatInt(task.ID, 10)
	do(t, env, tok, `mutation { setTaskStatus(id: `+id+`, status: Waiting, waitingDetails: "which branch?") { id } }`, nil).ok(t)
	const respond = `mutation($id: Int!, $r: String!, $k: String) { respond(id: $id, response: $r, idempotencyKey: $k) {
		id status waitingVersion conversation { role content } } }`
	same("respond", respond, map[string]any{"id": task.ID, "r": "main", "k": "answer-1"}) // the second is not a 409: the task is Doing
	conflict("respond", respond, map[string]any{"id": task.ID, "r": "dev", "k": "answer-1"})
	var one struct{ Conversation []struct{ Content string } }
	do(t, env, tok, `{ task(id: `+id+`) { conversation { content } } }`, nil).ok(t).into(t, "task", &one)
	if len(one.Conversation) != 1 {
		t.Fatalf("one answer expected after a retried respond: %+v", one)
	}

	const conv = `mutation($m: String!, $k: String) { createConversation(message: $m, idempotencyKey: $k) { id uuid name participants createdAt } }`
	raw = same("createConversation", conv, map[string]any{"m": "hello", "k": "conv-1"})
	conflict("createConversation", conv, map[string]any{"m": "hi", "k": "conv-1"})
	var c struct{ ID int64 }
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	const send = `mutation($c: ID!, $m: String!, $k: String) { sendMessage(conversationId: $c, message: $m, idempotencyKey: $k) { id content author createdAt } }`
	vars := map[string]any{"c": strconv.FormatInt(c.ID, 10), "m": "second", "k": "msg-1"}
	same("sendMessage", send, vars)
	conflict("sendMessage", send, map[string]any{"c": vars["c"], "m": "other", "k": "msg-1"})
	var msgs []struct{ Content string }
	do(t, env, tok, `{ messages(conversationId: `+strconv.FormatInt(c.ID, 10)+`) { content } }`, nil).ok(t).into(t, "messages", &msgs)
	var convs []struct{ ID int64 }
	do(t, env, tok, `{ conversations { id } }`, nil).ok(t).into(t, "conversations", &convs)
	if len(msgs) != 2 || len(convs) != 1 {
		t.Fatalf("after retries: %d messages, %d conversations", len(msgs), len(convs))
	}

	// The key is the service's, shared with REST: a key used there is used here.
	if _, err := env.Service.CreateTask(context.Background(), auth.Owner(pid), service.CreateTaskInput{Summary: "from REST"}, "rest-1"); err != nil {
		t.Fatal(err)
	}
	conflict("createTask", create, map[string]any{"s": "from GraphQL", "k": "rest-1"})

	for _, bad := range []string{"", "has space", string(make([]byte, 129))} {
		if r := do(t, env, tok, create, map[string]any{"s": "x", "k": bad}); r.code(t) != "invalid_argument" {
			t.Errorf("idempotencyKey %q: %s", bad, r.raw)
		}
	}
}
