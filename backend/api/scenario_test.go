package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// scenario is one request and what must come back (tasks_test.go, conversations_test.go).
type scenario struct {
	name     string
	method   string
	path     string // with placeholders: see the fixture's run
	token    string // a token of the fixture (see its run), none, or a literal Authorization header value after "raw:"
	body     string
	header   map[string]string
	status   int
	code     string   // error code expected, "" for success
	contains []string // substrings of the body
}

// send sends req with the scenario's extra headers and checks the answer: status,
// error code, a JSON error body, WWW-Authenticate on 401, and the substrings of the
// body (placeholders filled).
func (sc scenario) send(t *testing.T, env *testenv.Env, req testenv.Request, fill *strings.Replacer) *testenv.Response {
	t.Helper()
	path := req.Path
	for k, v := range sc.header {
		req.Header.Set(k, v)
	}
	r := env.Do(t, req)
	if r.Status != sc.status {
		t.Fatalf("%s %s: status %d, want %d; body %s", sc.method, path, r.Status, sc.status, r.Body)
	}
	if got := r.ErrorCode(); got != sc.code {
		t.Fatalf("%s %s: error code %q, want %q; body %s", sc.method, path, got, sc.code, r.Body)
	}
	if sc.status >= 400 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("error answer is not JSON: %q", r.Header.Get("Content-Type"))
	}
	if sc.status == http.StatusUnauthorized && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("401 without WWW-Authenticate: Bearer")
	}
	for _, s := range sc.contains {
		s = fill.Replace(s)
		if !strings.Contains(string(r.Body), s) {
			t.Fatalf("%s %s: body %s does not contain %q", sc.method, path, r.Body, s)
		}
	}
	return r
}
