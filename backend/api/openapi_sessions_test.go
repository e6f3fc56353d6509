package api_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// oaSessionScenarios cover a person's own sessions (sessions.go): list, end one, sign out
// everywhere, with the session cookie, and what other credentials get.
func oaSessionScenarios() []oaCase {
	listed := func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
		var body struct{ Sessions []oaListedSession }
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		n := slices.IndexFunc(body.Sessions, func(s oaListedSession) bool { return s.Current })
		if n < 0 || body.Sessions[n].ID != h.fresh.id || body.Sessions[n].UserAgent != "oa-test" || body.Sessions[n].Address != "192.0.2.1" {
			t.Fatalf("the request's own session is not listed as current: %s", r.body)
		}
		for i := 1; i < len(body.Sessions); i++ {
			if body.Sessions[i-1].ID < body.Sessions[i].ID {
				t.Fatalf("not newest first: %s", r.body)
			}
		}
	}
	cookieCleared := func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
		if c := r.header.Get("Set-Cookie"); !strings.HasPrefix(c, "agentdesk_session=;") || !strings.Contains(c, "Max-Age=0") {
			t.Fatalf("the cookie is not cleared: %q", c)
		}
	}
	cookieKept := func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
		if c := r.header.Get("Set-Cookie"); c != "" {
			t.Fatalf("ending another session touched this one's cookie: %q", c)
		}
	}
	cookieSet := func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
		if c := r.header.Get("Set-Cookie"); !strings.HasPrefix(c, "agentdesk_session=") || !strings.Contains(c, "HttpOnly") {
			t.Fatalf("no session cookie: %q", c)
		}
	}
	asJSON := map[string]string{"Accept": "application/json"}
	return []oaCase{
		{name: "start a session", method: "POST", path: "/api/session", auth: "rw", status: 204, check: cookieSet},
		{name: "start a session with a session", method: "POST", path: "/api/session", auth: "session", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "start a session with the desktop's token", method: "POST", path: "/api/session", auth: "desktop", status: 403, code: "forbidden"},
		{name: "start a session no credentials", method: "POST", path: "/api/session", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "sign out", method: "POST", path: "/logout", auth: "session", header: asJSON, status: 200, check: cookieCleared},
		{name: "sign out, no JSON asked", method: "POST", path: "/logout", auth: "session", status: 303, check: cookieCleared},
		{name: "sign out with a token", method: "POST", path: "/logout", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "sign out no credentials", method: "POST", path: "/logout", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "sessions", method: "GET", path: "/api/me/sessions", auth: "session", status: 200, check: listed},
		{name: "sessions with a token", method: "GET", path: "/api/me/sessions", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "sessions no credentials", method: "GET", path: "/api/me/sessions", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "end a session", method: "DELETE", path: "/api/me/sessions/{session}", auth: "session", status: 204, check: cookieKept},
		{name: "end this session", method: "DELETE", path: "/api/me/sessions/{freshSession}", auth: "session", status: 204, check: cookieCleared},
		{name: "end another person's session", method: "DELETE", path: "/api/me/sessions/{otherSession}", auth: "session", status: 404, code: "not_found"},
		{name: "end an unknown session", method: "DELETE", path: "/api/me/sessions/99999999", auth: "session", status: 404, code: "not_found"},
		{name: "end a session, id not a number", method: "DELETE", path: "/api/me/sessions/abc", auth: "session", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "end a session with a token", method: "DELETE", path: "/api/me/sessions/1", auth: "admin", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "end a session no credentials", method: "DELETE", path: "/api/me/sessions/1", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "sign out everywhere", method: "DELETE", path: "/api/me/sessions", auth: "session", status: 204, check: cookieCleared},
		{name: "sign out everywhere with a token", method: "DELETE", path: "/api/me/sessions", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "sign out everywhere no credentials", method: "DELETE", path: "/api/me/sessions", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
	}
}

type oaListedSession struct {
	ID                 int64
	UserAgent, Address string
	Current            bool
}
