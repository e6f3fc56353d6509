package graphql_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestErrorShape: request errors (syntax, validation, limits, variables, credentials)
// come without a data key, executed requests with one, and no error anywhere carries
// "locations": null. With Accept: application/graphql-response+json the answer has that
// media type and the same statuses (GraphQL over HTTP).
func TestErrorShape(t *testing.T) { pgtest.Engines(t, testErrorShape) }

func testErrorShape(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, auth.TaskRead)

	cases := []struct {
		name, token, query string
		vars               map[string]any
		status             int
		code               string
		data               bool // a data key is expected
	}{
		{"syntax", tok, `{ tasks { id `, nil, http.StatusBadRequest, "invalid_argument", false},
		{"validation", tok, `{ tasks { nope } }`, nil, http.StatusBadRequest, "invalid_argument", false},
		{"limit", tok, `{ tasks(first: 1000) { id steps { title } } }`, nil, http.StatusBadRequest, "invalid_argument", false},
		{"variables", tok, `query($s: TaskStatus) { tasks(status: $s) { id } }`, map[string]any{"s": "Nope"}, http.StatusBadRequest, "invalid_argument", false},
		{"operation name", tok, `query A { viewer { kind } } query B { viewer { kind } }`, nil, http.StatusBadRequest, "invalid_argument", false},
		{"no credentials", "", `{ viewer { kind } }`, nil, http.StatusUnauthorized, "unauthenticated", false},
		{"field error", tok, `{ tokens { id } }`, nil, http.StatusOK, "forbidden", true},
	}
	for _, accept := range []string{"", "application/json", "application/graphql-response+json", "application/graphql-response+json, application/json;q=0.9"} {
		for _, tc := range cases {
			h := http.Header{}
			if accept != "" {
				h.Set("Accept", accept)
			}
			resp := env.Do(t, testenv.Request{Method: http.MethodPost, Path: "/graphql", Token: tc.token, Header: h,
				Body: map[string]any{"query": tc.query, "variables": tc.vars}})
			var body struct {
				Data   *json.RawMessage `json:"data"`
				Errors []struct {
					Locations  json.RawMessage `json:"locations"`
					Extensions struct{ Code string }
				}
			}
			resp.JSON(t, &body)
			var keys map[string]json.RawMessage
			resp.JSON(t, &keys)
			_, hasData := keys["data"]
			status := tc.status
			if status == http.StatusBadRequest && !strings.HasPrefix(accept, "application/graphql-response+json") {
				status = http.StatusOK // GraphQL over HTTP: application/json reads request errors from a 200
			}
			if resp.Status != status || len(body.Errors) != 1 || body.Errors[0].Extensions.Code != tc.code || hasData != tc.data {
				t.Errorf("%s (Accept %q): %d %s", tc.name, accept, resp.Status, resp.Body)
			}
			if strings.Contains(string(resp.Body), `"locations":null`) {
				t.Errorf("%s: locations null: %s", tc.name, resp.Body)
			}
			want := "application/json"
			if strings.HasPrefix(accept, "application/graphql-response+json") {
				want = "application/graphql-response+json"
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, want+";") {
				t.Errorf("%s (Accept %q): Content-Type %q", tc.name, accept, ct)
			}
		}
	}

	// A syntax error says where it is.
	r := do(t, env, tok, `{ tasks { id `, nil)
	if !strings.Contains(r.raw, `"locations":[{"line":1,`) {
		t.Errorf("syntax error without its location: %s", r.raw)
	}

	// So does a validation error, on its line (validation runs without the source).
	r = do(t, env, tok, "query {\n  tasks {\n    nope\n  }\n}", nil)
	if !strings.Contains(r.raw, `"locations":[{"line":3,"column":5}]`) {
		t.Errorf("validation error not located: %s", r.raw)
	}
	r = do(t, env, tok, "query {\r\n  tasks(status: Nope) { id }\r\n}", nil)
	if !strings.Contains(r.raw, `"locations":[{"line":2,"column":17}]`) {
		t.Errorf("validation error not located (CRLF): %s", r.raw)
	}

	// The WebSocket's error messages too.
	c := connect(t, env, tok)
	c.subscribe("limit", `{ tasks(first: 1000) { id steps { title } } }`, nil)
	if m := c.read(); m.Type != "error" || strings.Contains(string(m.Payload), `"locations"`) {
		t.Errorf("error over WebSocket: %s %s", m.Type, m.Payload)
	}

	// A mutation over GET: 405, as GraphQL over HTTP says.
	get := env.Do(t, testenv.Request{Method: http.MethodGet, Token: tok, Path: "/graphql?query=" + url.QueryEscape(`mutation { deleteDoneTasks }`)})
	if get.Status != http.StatusMethodNotAllowed || get.Header.Get("Allow") != "POST" || strings.Contains(string(get.Body), `"data"`) {
		t.Errorf("GET mutation: %d %v %s", get.Status, get.Header, get.Body)
	}
	// Only the operation that runs matters.
	get = env.Do(t, testenv.Request{Method: http.MethodGet, Token: tok,
		Path: "/graphql?operationName=A&query=" + url.QueryEscape(`query A { viewer { kind } } mutation B { deleteDoneTasks }`)})
	if get.Status != http.StatusOK {
		t.Errorf("GET of a query beside a mutation: %d %s", get.Status, get.Body)
	}
}

// TestGraphQLHTTPRefusals: GraphQL over HTTP's own refusals carry GraphQL's errors, not
// the REST envelope: a method other than GET and POST (405 with Allow), and a POST whose
// body is not declared JSON (415; a form post is what a browser sends cross-site; no
// Content-Type at all is the audit's case, TestGraphQLOverHTTPAudit).
func TestGraphQLHTTPRefusals(t *testing.T) {
	env := testenv.Start(t)
	tok := env.Token(t, env.Project.ID, auth.TaskRead)
	for _, c := range []struct {
		method, contentType string
		status              int
	}{
		{http.MethodPut, "application/json", http.StatusMethodNotAllowed},
		{http.MethodDelete, "", http.StatusMethodNotAllowed},
		{http.MethodPost, "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{http.MethodPost, "text/plain", http.StatusUnsupportedMediaType},
		{http.MethodPost, "application/json; charset=utf-8", http.StatusOK},
	} {
		h := http.Header{"Content-Type": {c.contentType}}
		r := env.Do(t, testenv.Request{Method: c.method, Path: "/graphql", Token: tok, Header: h, Body: `{"query":"{ viewer { kind } }"}`})
		var body struct {
			Errors []struct{ Message string }
			Error  any
		}
		r.JSON(t, &body)
		if r.Status != c.status || (c.status != http.StatusOK && (len(body.Errors) != 1 || body.Error != nil)) {
			t.Errorf("%s with %q: %d %s, want %d with errors", c.method, c.contentType, r.Status, r.Body, c.status)
		}
		if c.status == http.StatusMethodNotAllowed && r.Header.Get("Allow") != "GET, POST" {
			t.Errorf("%s: Allow %q", c.method, r.Header.Get("Allow"))
		}
	}
}
