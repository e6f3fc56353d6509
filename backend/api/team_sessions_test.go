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

type listedSession struct {
	ID                    int64
	CreatedAt, LastSeenAt string
	UserAgent, Address    string
	Current               bool
}

func (tm *team) sessions(t *testing.T, cookie string) []listedSession {
	t.Helper()
	r := tm.env.Do(t, withCookie(testenv.Request{Method: "GET", Path: "/api/me/sessions"}, cookie, ""))
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/me/sessions: %d %s", r.Status, r.Body)
	}
	var body struct{ Sessions []listedSession }
	r.JSON(t, &body)
	return body.Sessions
}

func (tm *team) csrf(t *testing.T, cookie string) string {
	t.Helper()
	status, m := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
	if status != http.StatusOK || m.CSRFToken == "" {
		t.Fatalf("/api/me: %d %+v", status, m)
	}
	return m.CSRFToken
}

// TestTeamOwnSessions: a person lists their sessions (newest first, where each signed in
// from, which is this one), ends another of theirs, and signs out everywhere: every
// session's open event stream closes with 4401 and every cookie is refused after;
// another person's sessions are not theirs to see or end.
func TestTeamOwnSessions(t *testing.T) { pgtest.Engines(t, testTeamOwnSessions) }

func testTeamOwnSessions(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	tm.invite(t, "eve@elsewhere.org", model.RoleMember)
	laptop := tm.signIn(t, tm.browser(t), "dana")
	phone := tm.signIn(t, tm.browser(t), "dana")
	eve := tm.signIn(t, tm.browser(t), "eve")
	csrf := tm.csrf(t, laptop)

	list := tm.sessions(t, laptop)
	if len(list) != 2 || list[0].ID <= list[1].ID || list[0].Current || !list[1].Current {
		t.Fatalf("Dana's sessions from the laptop: %+v, want the phone's then this one (current)", list)
	}
	for _, s := range list {
		if s.UserAgent != "Go-http-client/1.1" || s.Address != "127.0.0.1" || s.CreatedAt == "" || s.LastSeenAt == "" {
			t.Fatalf("a session does not say where it signed in from: %+v", s)
		}
	}
	phoneID := list[0].ID
	evesList := tm.sessions(t, eve)
	if len(evesList) != 1 || !evesList[0].Current {
		t.Fatalf("Eve's sessions: %+v", evesList)
	}

	end := func(path, cookie, csrf string) *testenv.Response {
		return tm.env.Do(t, withCookie(testenv.Request{Method: "DELETE", Path: path}, cookie, csrf))
	}
	phonePath := fmt.Sprintf("/api/me/sessions/%d", phoneID)
	if r := end(phonePath, eve, tm.csrf(t, eve)); r.Status != http.StatusNotFound {
		t.Fatalf("Eve ends Dana's session: %d %s, want 404", r.Status, r.Body)
	}
	if r := end(phonePath, laptop, ""); r.Status != http.StatusForbidden {
		t.Fatalf("without the CSRF token: %d %s, want 403", r.Status, r.Body)
	}
	token := tm.env.Token(t, tm.env.Project.ID, auth.TaskRead)
	if r := tm.env.Do(t, testenv.Request{Method: "GET", Path: "/api/me/sessions", Token: token}); r.Status != http.StatusForbidden ||
		!strings.Contains(string(r.Body), "session") {
		t.Fatalf("a token lists sessions: %d %s, want 403 saying only sessions have sessions", r.Status, r.Body)
	}

	// Ending the phone's session from the laptop closes the phone's stream only.
	phoneStream := dialWithCookie(t, tm, phone)
	r := end(phonePath, laptop, csrf)
	if r.Status != http.StatusNoContent || r.Header.Get("Set-Cookie") != "" {
		t.Fatalf("end the phone's session: %d %s %v", r.Status, r.Body, r.Header["Set-Cookie"])
	}
	expectClose(t, phoneStream, "signed out")
	if status, _ := tm.me(t, withCookie(testenv.Request{}, phone, "")); status != http.StatusUnauthorized {
		t.Fatalf("the phone's ended cookie: %d, want 401", status)
	}
	if list := tm.sessions(t, laptop); len(list) != 1 || !list[0].Current {
		t.Fatalf("after ending the phone's: %+v", list)
	}

	// Sign out everywhere, with two sessions each holding a stream.
	phone = tm.signIn(t, tm.browser(t), "dana")
	laptopStream, phoneStream := dialWithCookie(t, tm, laptop), dialWithCookie(t, tm, phone)
	r = end("/api/me/sessions", laptop, csrf)
	if r.Status != http.StatusNoContent || !strings.Contains(r.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign out everywhere: %d %s %v", r.Status, r.Body, r.Header["Set-Cookie"])
	}
	expectClose(t, laptopStream, "signed out")
	expectClose(t, phoneStream, "signed out")
	for _, cookie := range []string{laptop, phone} {
		if status, _ := tm.me(t, withCookie(testenv.Request{}, cookie, "")); status != http.StatusUnauthorized {
			t.Fatalf("a cookie signed out everywhere: %d, want 401", status)
		}
	}
	if len(tm.sessions(t, eve)) != 1 {
		t.Fatal("Dana signing out everywhere ended Eve's session")
	}
}
