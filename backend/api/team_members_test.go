package api_test

import (
	"fmt"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestTeamMemberChangesTakeEffect: an owner's changes to a member hold from the member's
// next request: made a viewer, Dana can no longer write (and her open stream, which
// carried her old role, closes with 4401); removed, her session gets nothing and her
// open stream closes with 4401.
func TestTeamMemberChangesTakeEffect(t *testing.T) {
	pgtest.Engines(t, testTeamMemberChangesTakeEffect)
}

func testTeamMemberChangesTakeEffect(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	cookie := tm.signIn(t, tm.browser(t), "dana")
	status, m := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
	if status != http.StatusOK || m.User == nil {
		t.Fatalf("/api/me: %d %+v", status, m)
	}
	csrf, dana := m.CSRFToken, m.User.ID
	owner := tm.env.Token(t, tm.env.Project.ID, auth.Admin, auth.TaskRead)
	graphql := func(query string) {
		t.Helper()
		r := tm.env.Do(t, testenv.Request{Method: "POST", Path: "/graphql", Token: owner, Body: map[string]string{"query": query}})
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), `"errors"`) {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
	}
	create := func() int {
		return tm.env.Do(t, withCookie(testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"by Dana"}`}, cookie, csrf)).Status
	}
	list := func() int {
		return tm.env.Do(t, withCookie(testenv.Request{Method: "GET", Path: "/api/tasks"}, cookie, "")).Status
	}
	if s := create(); s != http.StatusCreated {
		t.Fatalf("a member creates a task: %d", s)
	}

	stream := dialWithCookie(t, tm, cookie)
	graphql(fmt.Sprintf(`mutation { setMemberRole(userId: %d, role: viewer) { role } }`, dana))
	if s := create(); s != http.StatusForbidden {
		t.Fatalf("a viewer creates a task: %d, want 403", s)
	}
	if s := list(); s != http.StatusOK {
		t.Fatalf("a viewer lists tasks: %d, want 200", s)
	}
	if _, m := tm.me(t, withCookie(testenv.Request{}, cookie, "")); strings.Contains(strings.Join(m.Scopes, " "), "write") {
		t.Fatalf("a viewer's scopes: %v", m.Scopes)
	}
	expectClose(t, stream, "role")

	stream = dialWithCookie(t, tm, cookie)
	graphql(fmt.Sprintf(`mutation { removeMember(userId: %d) }`, dana))
	if s := list(); s != http.StatusUnauthorized && s != http.StatusForbidden {
		t.Fatalf("a removed member lists tasks: %d, want 401 or 403", s)
	}
	if status, _ := tm.me(t, withCookie(testenv.Request{}, cookie, "")); status != http.StatusUnauthorized && status != http.StatusForbidden {
		t.Fatalf("a removed member's /api/me: %d, want 401 or 403", status)
	}
	expectClose(t, stream, "no longer a member")
}
