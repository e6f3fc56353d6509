package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// startTokenSession signs a browser in with token (POST /api/session) and returns the
// session cookie the answer sets.
func startTokenSession(t *testing.T, env *testenv.Env, token string) *http.Cookie {
	t.Helper()
	r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/session", Token: token})
	if r.Status != http.StatusNoContent || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("POST /api/session: %d %s %v", r.Status, r.Body, r.Header)
	}
	if n := len(r.Header.Values("Set-Cookie")); n != 1 {
		t.Fatalf("POST /api/session set %d cookies: %v", n, r.Header.Values("Set-Cookie"))
	}
	c, err := http.ParseSetCookie(r.Header.Get("Set-Cookie"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cookieRequest is r sent by a page of origin with the session cookie c (and the CSRF
// token, unless "").
func cookieRequest(r testenv.Request, c *http.Cookie, origin, csrf string) testenv.Request {
	r.Header = http.Header{"Cookie": {c.Name + "=" + c.Value}, "Origin": {origin}}
	if csrf != "" {
		r.Header.Set("X-CSRF-Token", csrf)
	}
	return r
}

// TestTokenSession: a platform token starts a browser session (HttpOnly, SameSite=Lax
// cookie, 30 days); the cookie alone then signs the browser in as the token
// (via "token-session"), changes need the session's CSRF token from the server's own
// origin; it ends on POST /logout and when its token is revoked. Data tokens, the
// desktop window's token and the session itself start none.
func TestTokenSession(t *testing.T) { pgtest.Engines(t, testTokenSession) }

func testTokenSession(t *testing.T, engine string) {
	env := testenv.StartWithOn(t, engine, server.Config{})
	ctx := context.Background()
	owner := auth.Owner(env.Project.ID)
	value, tok, err := env.Service.CreateToken(ctx, owner, service.CreateTokenInput{Name: "browser",
		Scopes: []string{auth.TaskRead, auth.TaskWrite}})
	if err != nil {
		t.Fatal(err)
	}

	c := startTokenSession(t, env, value)
	if c.Name != "agentdesk_session" || !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" ||
		c.MaxAge != int(service.SessionMaxAge.Seconds()) || len(c.Value) != 43 {
		t.Fatalf("the session cookie: %+v", c)
	}
	me := env.Do(t, cookieRequest(testenv.Request{Method: "GET", Path: "/api/me"}, c, env.URL, ""))
	var m meBody
	if me.Status != http.StatusOK {
		t.Fatalf("/api/me with the cookie: %d %s", me.Status, me.Body)
	}
	me.JSON(t, &m)
	if m.Via != "token-session" || m.CSRFToken == "" || m.User != nil || m.Project.ID != env.Project.ID ||
		!slices.Equal(m.Scopes, []string{auth.TaskRead, auth.TaskWrite}) {
		t.Fatalf("/api/me with the cookie: %+v", m)
	}

	create := testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"from a new tab"}`}
	if r := env.Do(t, cookieRequest(create, c, env.URL, "")); r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "X-CSRF-Token") {
		t.Fatalf("a change without the CSRF token: %d %s, want 403", r.Status, r.Body)
	}
	if r := env.Do(t, cookieRequest(create, c, "http://evil.example", m.CSRFToken)); r.Status != http.StatusForbidden {
		t.Fatalf("a change from another origin: %d %s, want 403", r.Status, r.Body)
	}
	if r := env.Do(t, cookieRequest(create, c, env.URL, m.CSRFToken)); r.Status != http.StatusCreated {
		t.Fatalf("a change with the CSRF token: %d %s, want 201", r.Status, r.Body)
	}
	viewer := testenv.Request{Method: "POST", Path: "/graphql", Body: `{"query":"{ viewer { kind name } }"}`}
	if r := env.Do(t, cookieRequest(viewer, c, env.URL, "")); r.Status != http.StatusForbidden {
		t.Fatalf("GraphQL with the cookie, without the CSRF token: %d %s, want 403", r.Status, r.Body)
	}
	if r := env.Do(t, cookieRequest(viewer, c, env.URL, m.CSRFToken)); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"name":"browser"`) {
		t.Fatalf("GraphQL with the cookie: %d %s, want the token as viewer", r.Status, r.Body)
	}
	if r := env.Do(t, cookieRequest(testenv.Request{Method: "POST", Path: "/api/session"}, c, env.URL, m.CSRFToken)); r.Status != http.StatusForbidden {
		t.Fatalf("a session starting a session: %d %s, want 403", r.Status, r.Body)
	}

	// Who may start one.
	data := env.TypedToken(t, env.Project.ID, model.TokenData, auth.VectorRead)
	if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/session", Token: data}); r.Status != http.StatusForbidden {
		t.Fatalf("a data token: %d %s, want 403", r.Status, r.Body)
	}
	desktop, err := env.Service.StartDesktopSession(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/session", Token: desktop.Token}); r.Status != http.StatusForbidden {
		t.Fatalf("the desktop window's token: %d %s, want 403", r.Status, r.Body)
	}
	if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/session"}); r.Status != http.StatusUnauthorized {
		t.Fatalf("no credential: %d %s, want 401", r.Status, r.Body)
	}

	// Signing out: needs the CSRF token, ends the session, clears the cookie.
	second := startTokenSession(t, env, value)
	logout := cookieRequest(testenv.Request{Method: "POST", Path: "/logout"}, second, env.URL, "")
	if r := env.Do(t, logout); r.Status != http.StatusForbidden {
		t.Fatalf("logout without the CSRF token: %d %s, want 403", r.Status, r.Body)
	}
	_, m2 := meWith(t, env, second)
	logout.Header.Set("X-CSRF-Token", m2.CSRFToken)
	logout.Header.Set("Accept", "application/json") // {"redirect"} rather than a 303 the client follows
	r := env.Do(t, logout)
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != `{"redirect":"/"}` ||
		!strings.HasPrefix(r.Header.Get("Set-Cookie"), "agentdesk_session=;") {
		t.Fatalf("logout: %d %s %v", r.Status, r.Body, r.Header)
	}
	if status, _ := meWith(t, env, second); status != http.StatusUnauthorized {
		t.Fatalf("a signed-out session: %d, want 401", status)
	}
	if status, _ := meWith(t, env, c); status != http.StatusOK {
		t.Fatalf("another session of the token after the logout: %d, want 200", status)
	}

	// Revoking the token ends its sessions.
	if err := env.Service.RevokeToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	me = env.Do(t, cookieRequest(testenv.Request{Method: "GET", Path: "/api/me"}, c, env.URL, ""))
	if me.Status != http.StatusUnauthorized || !strings.Contains(string(me.Body), "revoked") {
		t.Fatalf("the session of a revoked token: %d %s, want 401 saying revoked", me.Status, me.Body)
	}
}

func meWith(t *testing.T, env *testenv.Env, c *http.Cookie) (int, meBody) {
	t.Helper()
	r := env.Do(t, cookieRequest(testenv.Request{Method: "GET", Path: "/api/me"}, c, env.URL, ""))
	var m meBody
	if r.Status == http.StatusOK {
		r.JSON(t, &m)
	}
	return r.Status, m
}

// TestTokenSessionSecureCookie: behind an https public URL the cookie is Secure and
// __Host- prefixed, and changes must come from that origin.
func TestTokenSessionSecureCookie(t *testing.T) {
	const public = "https://desk.example"
	env := testenv.StartWith(t, server.Config{PublicURL: public})
	c := startTokenSession(t, env, env.Token(t, env.Project.ID, auth.TaskRead, auth.TaskWrite))
	if c.Name != "__Host-agentdesk_session" || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
		t.Fatalf("the session cookie behind https: %+v", c)
	}
	r := env.Do(t, cookieRequest(testenv.Request{Method: "GET", Path: "/api/me"}, c, public, ""))
	var m meBody
	r.JSON(t, &m)
	create := testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"x"}`}
	if r := env.Do(t, cookieRequest(create, c, env.URL, m.CSRFToken)); r.Status != http.StatusForbidden {
		t.Fatalf("a change from the listening address, not the public URL: %d %s, want 403", r.Status, r.Body)
	}
	if r := env.Do(t, cookieRequest(create, c, public, m.CSRFToken)); r.Status != http.StatusCreated {
		t.Fatalf("a change from the public URL: %d %s, want 201", r.Status, r.Body)
	}
}

// TestTokenSessionInTeamMode: with sign-in by OpenID Connect on, a token's session works
// beside people's.
func TestTokenSessionInTeamMode(t *testing.T) {
	tm := startTeam(t, "sqlite")
	c := startTokenSession(t, tm.env, tm.env.Token(t, tm.env.Project.ID, auth.TaskRead))
	status, m := tm.me(t, cookieRequest(testenv.Request{}, c, teamPublicURL, ""))
	if status != http.StatusOK || m.Via != "token-session" || m.CSRFToken == "" {
		t.Fatalf("/api/me with a token's session in team mode: %d %+v", status, m)
	}
}
