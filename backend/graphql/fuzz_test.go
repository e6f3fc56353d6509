package graphql_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// FuzzGraphQL sends documents and variables to /graphql on a real server. Whatever they
// are, the answer is never a 5xx or an internal error, and it is one well-formed GraphQL
// response: JSON with errors and/or data (data only once execution ran), every error
// with a message and a contract code, none with "locations": null.
//
// The seed corpus runs in every `go test`; `make fuzz` explores for a minute.
func FuzzGraphQL(f *testing.F) {
	deep := func(open, inner, close string, n int) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	for _, seed := range []struct{ query, vars string }{
		{`{ projects { id name namespace } }`, ``},
		{`{ agents { id name skills { id name } } }`, `{}`},
		{`{ viewer { kind name scopes projectId } }`, `null`},
		{`query($n: Int = 1000) { tasks(first: $n) { id steps { title } } }`, `{}`},
		{`query($n: Int) { a: tasks(first: $n) { id } b: tasks(first: $n) { steps { title } } }`, `{"n": "1000"}`},
		{`query($s: TaskStatus) { tasks(status: $s) { id summary status } }`, `{"s": "Nope"}`},
		{`query($s: TaskStatus) { tasks(status: $s) { id } }`, `{"s": [[["Todo"]]]}`},
		{`mutation($s: String!, $k: String) { createTask(summary: $s, steps: [{title: "a"}], idempotencyKey: $k) { id steps { index title } } }`, `{"s": "x", "k": "fuzz-1"}`},
		{`mutation { createTask(summary: "x", agentId: 99999) { id } }`, ``},
		{`mutation($m: String!) { createConversation(message: $m) { id uuid } }`, `{"m": "\u0000\ud800"}`},
		{`mutation { sendMessage(conversationId: "nope", message: "hi") { id } }`, ``},
		{`mutation { respond(id: -1, response: "") { id } }`, ``},
		{`{ vectorSearch(spaceId: 1, query: "x", k: 100000) { chunk } }`, ``},
		{`{ task(id: 2147483648) { id } }`, ``},
		{`query A { viewer { kind } } query B { projects { id } }`, ``},
		{`{ ...F } fragment F on Query { ...F }`, ``},
		{`{ __schema { types { name fields { name } } } }`, ``},
		{`subscription { taskChanged { id } }`, ``},
		{`type T { f: Int }`, ``},
		{`{ tasks(status: ` + deep("[", "Todo", "]", 200) + `) { id } }`, ``},
		{`mutation { createTask(summary: "x", steps: ` + deep("{title: ", `"t"`, "}", 20) + `) { id } }`, ``},
		{deep("{ a ", "b", " }", 100), ``},
		{"{" + strings.Repeat(` a: tasks(status: [Todo, Todo, Todo]) { id }`, 60) + " }", ``},
		{`{ viewer(` + strings.Repeat(`x: 1, `, 3000) + `) { kind } }`, ``},
		{"query {\r\n  tasks {\n    nope\r  }\n}", ``},
		{`{ tasks { id `, ``},
		{`{ "str" }`, ``},
		{``, ``},
		{`{ tasks { id } }`, `[1, 2]`},
		{`{ tasks { id } }`, `{"unused": {"deep": [[[[1]]]]}}`},
		{"{ projects { id } }\x00\xff", `{}`},
	} {
		f.Add(seed.query, seed.vars)
	}

	env := testenv.Start(f)
	var mu sync.Mutex
	token := env.Token(f, env.Project.ID, allScopes...)
	env.Agent(f, env.Project.ID, "worker")
	currentToken := func(t *testing.T, renew bool) string {
		mu.Lock()
		defer mu.Unlock()
		if renew { // a mutation revoked or rotated it
			token = env.Token(t, env.Project.ID, allScopes...)
		}
		return token
	}
	codes := map[string]bool{"invalid_argument": true, "unauthenticated": true, "forbidden": true, "not_found": true,
		"conflict": true, "payload_too_large": true, "rate_limited": true}

	f.Fuzz(func(t *testing.T, query, vars string) {
		q, _ := json.Marshal(query)
		v := []byte(vars)
		if vars == "" {
			v = []byte("null") // no variables
		} else if !json.Valid(v) {
			v, _ = json.Marshal(vars) // a string: not an object, which is a request error
		}
		body := []byte(`{"query":` + string(q) + `,"variables":` + string(v) + `}`)
		r := env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/graphql", Token: currentToken(t, false), Body: body})
		if r.Status == http.StatusUnauthorized && bytes.Contains(r.Body, []byte("token")) {
			currentToken(t, true) // the token ended; the next input gets a new one
		}
		if r.Status >= 500 {
			t.Fatalf("status %d for %q %q: %s", r.Status, query, vars, r.Body)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("Content-Type %q for %q", ct, query)
		}
		var resp map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &resp); err != nil {
			t.Fatalf("not a JSON object for %q %q: %s", query, vars, r.Body)
		}
		// Asked with application/json: a request error (no data) answers 200 too, any
		// other 4xx has no data either.
		_, hasData := resp["data"]
		if hasData && r.Status != http.StatusOK {
			t.Fatalf("status %d with data %v for %q %q: %s", r.Status, hasData, query, vars, r.Body)
		}
		var errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
		if raw, ok := resp["errors"]; ok {
			if err := json.Unmarshal(raw, &errors); err != nil || len(errors) == 0 {
				t.Fatalf("errors is not a list of errors for %q: %s", query, r.Body)
			}
		} else if !hasData {
			t.Fatalf("neither data nor errors for %q: %s", query, r.Body)
		}
		for _, e := range errors {
			if e.Message == "" || !codes[e.Extensions.Code] {
				t.Fatalf("error %+v for %q %q: %s", e, query, vars, r.Body)
			}
		}
		if bytes.Contains(r.Body, []byte(`"locations":null`)) {
			t.Fatalf("locations null for %q: %s", query, r.Body)
		}
	})
}
