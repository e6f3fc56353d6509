package api_test

import (
	"context"
	"errors"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/oidcop"
)

// Team mode against a real OpenID Provider: zitadel/oidc's op package with its example
// storage and login page, in process. It serves discovery, JWKS, RS256-signed ID
// tokens, PKCE and end_session; the test's browser is an http.Client with a cookie jar.

// teamPublicURL is what people type; the test's browser dials it to the server.
const teamPublicURL = "http://agentdesk.test"

// opStorage lets a test make the provider's JWKS publish a wrong key (see
// oidcop.Provider.WrongKey).
type opStorage struct{ wrongKey *atomic.Bool }

type team struct {
	env   *testenv.Env
	op    string // the provider's issuer URL
	clock *jobstest.ManualClock
	st    *opStorage
	p     *oidcop.Provider
}

// teamSetup is what a test changes of startTeam's provider and server.
type teamSetup struct {
	allowedDomains []string
	trustEmail     bool                  // --oidc-trust-email
	provider       func(*oidcop.Options) // changes the provider's options
	proxied        bool                  // --trusted-proxies 127.0.0.1/32 (see browserFrom)
}

// startTeam starts the provider (backend/testenv/oidcop) and a server in team mode.
func startTeam(t *testing.T, engine string, allowedDomains ...string) *team {
	t.Helper()
	return startTeamWith(t, engine, teamSetup{allowedDomains: allowedDomains})
}

func startTeamWith(t *testing.T, engine string, setup teamSetup) *team {
	t.Helper()
	var users []oidcop.User
	for _, u := range []struct {
		id, name, email string
		unverified      bool
	}{
		{"u1", "dana", "dana@example.com", false}, {"u2", "eve", "eve@elsewhere.org", false}, {"u3", "lee", "lee@corp.example", false},
		{"u4", "dana2", "dana@example.com", false}, // another account claiming Dana's email
		{"u5", "ivy", "inv@acme.test", true},       // an email the provider has not verified
	} {
		users = append(users, oidcop.User{ID: u.id, Username: u.name, Password: "pw", Email: u.email, EmailUnverified: u.unverified,
			Name: strings.ToUpper(u.name[:1]) + u.name[1:] + " Test"})
	}
	o := oidcop.Options{ClientID: "agentdesk", ClientSecret: "s3cret",
		RedirectURIs: []string{teamPublicURL + "/auth/callback"}, Users: users}
	if setup.provider != nil {
		setup.provider(&o)
	}
	p, err := oidcop.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	issuer := p.Issuer

	var proxies string
	if setup.proxied {
		proxies = "127.0.0.1/32"
	}
	trusted, err := server.ParseTrustedProxies(proxies)
	if err != nil {
		t.Fatal(err)
	}
	clock := jobstest.NewManualClock(time.Now())
	env := testenv.StartWithOn(t, engine, server.Config{Clock: clock, PublicURL: teamPublicURL, TrustedProxies: trusted, OIDC: auth.OIDC{
		PublicURL: teamPublicURL, Issuer: issuer, ClientID: "agentdesk", ClientSecret: "s3cret",
		Scopes: []string{"openid", "email", "profile"}, AllowedDomains: setup.allowedDomains, TrustEmail: setup.trustEmail}})
	return &team{env: env, op: issuer, clock: clock, st: &opStorage{wrongKey: &p.WrongKey}, p: p}
}

// invite adds a person to the default project by email, as the local owner would
// (agentdesk user add).
func (tm *team) invite(t *testing.T, email, role string) {
	t.Helper()
	if _, err := tm.env.Service.AddMember(context.Background(), auth.Owner(tm.env.Project.ID),
		service.AddMemberInput{Email: email, Role: role}); err != nil {
		t.Fatal(err)
	}
}

// browser is a client with a cookie jar that reaches the server at teamPublicURL and
// stops before following a redirect to the server's /auth/callback.
func (tm *team) browser(t *testing.T) *http.Client { return tm.browserFrom(t, "") }

// browserFrom is a browser at the client address addr, as the trusted proxy of a
// proxied team server forwards it ("": the loopback address it dials from).
func (tm *team) browserFrom(t *testing.T, addr string) *http.Client {
	jar, _ := cookiejar.New(nil)
	server := strings.TrimPrefix(tm.env.URL, "http://")
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		if a == "agentdesk.test:80" {
			a = server
		}
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	var rt http.RoundTripper = tr
	if addr != "" {
		rt = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "agentdesk.test" {
				r = r.Clone(r.Context())
				r.Header.Set("X-Forwarded-For", addr)
			}
			return tr.RoundTrip(r)
		})
	}
	return &http.Client{Jar: jar, Transport: rt, Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host == "agentdesk.test" {
				return http.ErrUseLastResponse
			}
			return nil
		}}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func send(t *testing.T, c *http.Client, method, u string, form url.Values) *http.Response {
	t.Helper()
	var resp *http.Response
	var err error
	if form != nil {
		resp, err = c.PostForm(u, form)
	} else {
		req, _ := http.NewRequest(method, u, nil)
		resp, err = c.Do(req)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	resp.Body.Close()
	return resp
}

// toCallback signs in at the provider as username and returns the URL the provider
// sends the browser back to (the server's /auth/callback?code=...&state=...).
// editAuth may change the authorization request on its way to the provider.
func (tm *team) toCallback(t *testing.T, c *http.Client, username string, editAuth func(q url.Values)) *url.URL {
	t.Helper()
	noFollow := *c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp := send(t, &noFollow, "GET", teamPublicURL+"/login", nil)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("/login: %d, want 302", resp.StatusCode)
	}
	authURL, _ := url.Parse(resp.Header.Get("Location"))
	q := authURL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "" {
		t.Fatalf("authorization request lacks PKCE S256, state or nonce: %s", authURL)
	}
	if editAuth != nil {
		editAuth(q)
		authURL.RawQuery = q.Encode()
	}
	resp = send(t, c, "GET", authURL.String(), nil) // ends at the provider's login page
	id := resp.Request.URL.Query().Get("authRequestID")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("provider's login page: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	resp = send(t, c, "POST", tm.op+"/login/username", url.Values{"id": {id}, "username": {username}, "password": {"pw"}})
	cb, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || cb.Path != "/auth/callback" {
		t.Fatalf("provider did not send the browser back: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	return cb
}

// signIn runs the whole sign-in and returns the session cookie's value.
func (tm *team) signIn(t *testing.T, c *http.Client, username string) string {
	t.Helper()
	resp := send(t, c, "GET", tm.toCallback(t, c, username, nil).String(), nil)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/" {
		t.Fatalf("callback: %d to %q, want 302 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "agentdesk_session" {
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Secure {
				t.Fatalf("session cookie attributes: %+v", ck)
			}
			return ck.Value
		}
	}
	t.Fatalf("no session cookie in %v", resp.Header["Set-Cookie"])
	return ""
}

// withCookie is a request sent with the session cookie, as the browser's page would:
// from the public origin, with the CSRF token when csrf is set.
func withCookie(r testenv.Request, cookie, csrf string) testenv.Request {
	h := http.Header{"Cookie": {"agentdesk_session=" + cookie}, "Origin": {teamPublicURL}}
	if csrf != "" {
		h.Set("X-CSRF-Token", csrf)
	}
	for k, v := range r.Header {
		h[k] = v
	}
	r.Header = h
	return r
}

type meBody struct {
	Via  string
	User *struct {
		ID          int64
		Email, Name string
	}
	Project     struct{ ID, Name string }
	Scopes      []string
	Memberships []struct{ ProjectID, ProjectName, Role string }
	CSRFToken   string
}

func (tm *team) me(t *testing.T, r testenv.Request) (int, meBody) {
	t.Helper()
	r.Method, r.Path = "GET", "/api/me"
	resp := tm.env.Do(t, r)
	var m meBody
	if resp.Status == http.StatusOK {
		resp.JSON(t, &m)
	}
	return resp.Status, m
}

// TestTeamSignIn: an invited person signs in through the provider, acts with the
// cookie (changes need the CSRF token and the public origin), and signs out, which
// closes their open event stream with 4401.
func TestTeamSignIn(t *testing.T) { pgtest.Engines(t, testTeamSignIn) }

func testTeamSignIn(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	c := tm.browser(t)
	cookie := tm.signIn(t, c, "dana")

	status, m := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
	if status != http.StatusOK || m.Via != "session" || m.User == nil || m.User.Email != "dana@example.com" || m.User.Name != "Dana Test" ||
		m.Project.ID != tm.env.Project.ID || m.CSRFToken == "" || len(m.Memberships) != 1 || m.Memberships[0].Role != "member" {
		t.Fatalf("/api/me: %d %+v", status, m)
	}
	csrf := m.CSRFToken

	create := testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"by Dana"}`}
	for _, tc := range []struct {
		name   string
		req    testenv.Request
		status int
	}{
		{"no CSRF token", withCookie(create, cookie, ""), http.StatusForbidden},
		{"wrong CSRF token", withCookie(create, cookie, "nope"), http.StatusForbidden},
		{"foreign Origin", withCookie(testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"x"}`,
			Header: http.Header{"Origin": {"http://evil.example"}}}, cookie, csrf), http.StatusForbidden},
		{"GraphQL over GET", withCookie(testenv.Request{Method: "GET", Path: "/graphql?query=%7Bme%7D"}, cookie, csrf), http.StatusForbidden},
		{"CSRF token and origin", withCookie(create, cookie, csrf), http.StatusCreated},
		{"Sec-Fetch-Site instead of Origin", testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"y"}`,
			Header: http.Header{"Cookie": {"agentdesk_session=" + cookie}, "X-Csrf-Token": {csrf}, "Sec-Fetch-Site": {"same-origin"}}}, http.StatusCreated},
		{"a bearer token needs neither", testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"z"}`,
			Token: tm.env.Token(t, tm.env.Project.ID, auth.TaskWrite, auth.TaskRead)}, http.StatusCreated},
	} {
		if r := tm.env.Do(t, tc.req); r.Status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.Status, r.Body, tc.status)
		}
	}
	// GraphQL with the cookie: POST with a JSON body and the CSRF token.
	gql := withCookie(testenv.Request{Method: "POST", Path: "/graphql", Body: `{"query":"{ tasks { id } }"}`}, cookie, csrf)
	if r := tm.env.Do(t, gql); r.Status != http.StatusOK || strings.Contains(string(r.Body), `"errors"`) {
		t.Errorf("GraphQL with the cookie: %d %s", r.Status, r.Body)
	}

	// What the person does is theirs in the activity trail.
	acts, err := tm.env.Service.Activity(context.Background(), auth.Owner(tm.env.Project.ID), service.ActivityInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(acts, func(a model.Activity) bool {
		return a.ActorKind == "user" && a.Actor == "Dana Test" && a.Action == "task.created"
	}) {
		t.Errorf("no task.created by Dana Test in the activity trail: %+v", acts)
	}

	// Sign out: the open stream closes with 4401, the cookie is cleared and refused.
	conn := dialWithCookie(t, tm, cookie)
	logout := withCookie(testenv.Request{Method: "POST", Path: "/logout", Header: http.Header{"Accept": {"application/json"}}}, cookie, "")
	if r := tm.env.Do(t, logout); r.Status != http.StatusForbidden {
		t.Fatalf("logout without CSRF token: %d %s", r.Status, r.Body)
	}
	logout.Header.Set("X-CSRF-Token", csrf)
	r := tm.env.Do(t, logout)
	var out struct{ Redirect string }
	r.JSON(t, &out)
	if r.Status != http.StatusOK || !strings.HasPrefix(out.Redirect, tm.op+"/end_session?") || !strings.Contains(r.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %s %v", r.Status, r.Body, r.Header["Set-Cookie"])
	}
	expectClose(t, conn, "signed out")
	if status, _ := tm.me(t, withCookie(testenv.Request{}, cookie, "")); status != http.StatusUnauthorized {
		t.Fatalf("signed-out cookie: %d, want 401", status)
	}
}

func dialWithCookie(t *testing.T, tm *team, cookie string) *websocket.Conn {
	t.Helper()
	h := http.Header{"Cookie": {"agentdesk_session=" + cookie}, "Origin": {teamPublicURL}}
	conn, resp, err := websocket.DefaultDialer.Dial(strings.Replace(tm.env.URL, "http://", "ws://", 1)+"/api/events", h)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial /api/events with the cookie: %v (%d)", err, status)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// expectClose reads until the socket closes, which must be 4401 with reason.
func expectClose(t *testing.T, conn *websocket.Conn, reason string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound for a broken test, not a timing assertion
	for {
		_, _, err := conn.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != 4401 || !strings.Contains(ce.Text, reason) {
				t.Fatalf("closed with %d %q, want 4401 saying %q", ce.Code, ce.Text, reason)
			}
			return
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
	}
}

// callbackStatus follows the provider's redirect to the server's callback and returns
// the status and page.
func callbackStatus(t *testing.T, c *http.Client, cb *url.URL) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", cb.String(), nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	for _, ck := range resp.Cookies() {
		if ck.Name == "agentdesk_session" && ck.Value != "" && resp.StatusCode != http.StatusFound {
			t.Errorf("a refused sign-in set a session cookie")
		}
	}
	return resp.StatusCode, b.String()
}

// TestTeamSignInRefusals: what the callback must refuse, each against the real provider.
func TestTeamSignInRefusals(t *testing.T) { pgtest.Engines(t, testTeamSignInRefusals) }

func testTeamSignInRefusals(t *testing.T, engine string) {
	tm := startTeam(t, engine, "corp.example")
	tm.invite(t, "dana@example.com", model.RoleMember)

	t.Run("wrong state", func(t *testing.T) {
		c := tm.browser(t)
		cb := tm.toCallback(t, c, "dana", nil)
		q := cb.Query()
		q.Set("state", auth.RandomString(43))
		cb.RawQuery = q.Encode()
		if status, page := callbackStatus(t, c, cb); status != http.StatusUnauthorized || !strings.Contains(page, "unknown or was already used") {
			t.Fatalf("%d %s", status, page)
		}
	})
	t.Run("callback in another browser", func(t *testing.T) {
		cb := tm.toCallback(t, tm.browser(t), "dana", nil)
		other := tm.browser(t)
		if status, page := callbackStatus(t, other, cb); status != http.StatusUnauthorized || !strings.Contains(page, "another browser") {
			t.Fatalf("%d %s", status, page)
		}
	})
	t.Run("replayed callback and code", func(t *testing.T) {
		c := tm.browser(t)
		cb := tm.toCallback(t, c, "dana", nil)
		if status, page := callbackStatus(t, c, cb); status != http.StatusFound {
			t.Fatalf("first use: %d %s", status, page)
		}
		if status, page := callbackStatus(t, c, cb); status != http.StatusUnauthorized || !strings.Contains(page, "already used") {
			t.Fatalf("same state again: %d %s", status, page)
		}
		// The spent code with the state of a new login: the provider refuses it.
		fresh := tm.toCallback(t, c, "dana", nil)
		q := fresh.Query()
		q.Set("code", cb.Query().Get("code"))
		fresh.RawQuery = q.Encode()
		if status, page := callbackStatus(t, c, fresh); status != http.StatusUnauthorized || !strings.Contains(page, "did not accept the sign-in code") {
			t.Fatalf("spent code: %d %s", status, page)
		}
	})
	t.Run("nonce mismatch", func(t *testing.T) {
		c := tm.browser(t)
		cb := tm.toCallback(t, c, "dana", func(q url.Values) { q.Set("nonce", "another-login") })
		if status, page := callbackStatus(t, c, cb); status != http.StatusUnauthorized || !strings.Contains(page, "nonce") {
			t.Fatalf("%d %s", status, page)
		}
	})
	t.Run("email outside the allowed domains", func(t *testing.T) {
		c := tm.browser(t)
		cb := tm.toCallback(t, c, "eve", nil)
		if status, page := callbackStatus(t, c, cb); status != http.StatusForbidden || !strings.Contains(page, "eve@elsewhere.org is not invited") {
			t.Fatalf("%d %s", status, page)
		}
	})
	t.Run("invitation already taken by another account", func(t *testing.T) {
		tm.signIn(t, tm.browser(t), "dana") // links the invitation to Dana's account
		c := tm.browser(t)
		cb := tm.toCallback(t, c, "dana2", nil)
		if status, page := callbackStatus(t, c, cb); status != http.StatusForbidden || !strings.Contains(page, "already signs in with another account") {
			t.Fatalf("%d %s", status, page)
		}
	})
	t.Run("signing in again ends the browser's old session", func(t *testing.T) {
		c := tm.browser(t)
		first := tm.signIn(t, c, "dana")
		second := tm.signIn(t, c, "dana")
		if s, _ := tm.me(t, withCookie(testenv.Request{}, first, "")); s != http.StatusUnauthorized {
			t.Errorf("replaced session: %d, want 401", s)
		}
		if s, _ := tm.me(t, withCookie(testenv.Request{}, second, "")); s != http.StatusOK {
			t.Errorf("new session: %d", s)
		}
	})
	t.Run("allowed domain joins as member", func(t *testing.T) {
		c := tm.browser(t)
		cookie := tm.signIn(t, c, "lee")
		status, m := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
		if status != http.StatusOK || m.User == nil || m.User.Email != "lee@corp.example" || len(m.Memberships) != 1 || m.Memberships[0].Role != model.RoleMember {
			t.Fatalf("%d %+v", status, m)
		}
	})
	t.Run("expired ID token", func(t *testing.T) {
		// The server's clock is two hours on: the provider's one-hour ID token is
		// expired by the time the callback checks it.
		tm.clock.Advance(2 * time.Hour)
		c := tm.browser(t)
		cb := tm.toCallback(t, c, "dana", nil)
		if status, page := callbackStatus(t, c, cb); status != http.StatusUnauthorized || !strings.Contains(page, "expired") {
			t.Fatalf("%d %s", status, page)
		}
	})
}

// TestTeamWronglySignedIDToken: the provider's JWKS holds another key under the signing
// key's id, so the ID token's signature does not verify.
func TestTeamWronglySignedIDToken(t *testing.T) { pgtest.Engines(t, testTeamWronglySignedIDToken) }

func testTeamWronglySignedIDToken(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	tm.st.wrongKey.Store(true)
	c := tm.browser(t)
	cb := tm.toCallback(t, c, "dana", nil)
	if status, page := callbackStatus(t, c, cb); status != http.StatusUnauthorized || !strings.Contains(page, "signature") {
		t.Fatalf("%d %s", status, page)
	}
}

// TestTeamCookies: a tampered, idle-expired, too old or signed-out cookie is refused;
// a removed member's stream closes; /api/me answers every credential kind.
func TestTeamCookies(t *testing.T) { pgtest.Engines(t, testTeamCookies) }

func testTeamCookies(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	cookie := tm.signIn(t, tm.browser(t), "dana")
	get := func(cookie string) int {
		status, _ := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
		return status
	}
	if get(cookie) != http.StatusOK {
		t.Fatal("fresh cookie refused")
	}
	tampered := []byte(cookie)
	tampered[5] ^= 1
	if s := get(string(tampered)); s != http.StatusUnauthorized {
		t.Errorf("tampered cookie: %d", s)
	}
	if s := get(cookie + "x"); s != http.StatusUnauthorized {
		t.Errorf("lengthened cookie: %d", s)
	}

	// A removed member loses their open stream.
	live := tm.signIn(t, tm.browser(t), "dana")
	conn := dialWithCookie(t, tm, live)
	_, m := tm.me(t, withCookie(testenv.Request{}, live, ""))
	if err := tm.env.Service.RemoveMember(context.Background(), auth.Owner(tm.env.Project.ID), m.User.ID); err != nil {
		t.Fatal(err)
	}
	expectClose(t, conn, "no longer a member")
	if s := get(live); s != http.StatusForbidden {
		t.Errorf("removed member's session: %d, want 403", s)
	}

	// Used every 6 days, a session lives 30 days; unused for 7, it ends. (The clock
	// moves only for the server, so every sign-in happens before it does.)
	tm.invite(t, "dana@example.com", model.RoleMember) // back in the project
	if s := get(cookie); s != http.StatusOK {
		t.Fatalf("re-invited member's session: %d", s)
	}
	idle := tm.signIn(t, tm.browser(t), "dana")
	for i := range 4 {
		tm.clock.Advance(6 * 24 * time.Hour)
		if s := get(cookie); s != http.StatusOK {
			t.Fatalf("session used within a week refused: %d", s)
		}
		if i != 1 {
			continue
		}
		if s := get(idle); s != http.StatusUnauthorized {
			t.Errorf("session unused for 12 days: %d", s)
		}
	}
	tm.clock.Advance(6 * 24 * time.Hour) // 30 days old
	if s := get(cookie); s != http.StatusUnauthorized {
		t.Errorf("30-day-old session: %d", s)
	}

	// /api/me for the other credentials.
	tok := tm.env.Token(t, tm.env.Project.ID, auth.TaskRead)
	if status, m := tm.me(t, testenv.Request{Token: tok}); status != http.StatusOK || m.Via != "token" || m.User != nil || m.CSRFToken != "" || m.Project.ID != tm.env.Project.ID {
		t.Errorf("token: %d %+v", status, m)
	}
	tm.env.Agent(t, tm.env.Project.ID, "builder")
	h := tm.env.AgentHeaders(t, tm.env.Project.ID, "builder")
	h.Set("X-Agentdesk-Project", tm.env.Project.ID)
	if status, m := tm.me(t, testenv.Request{Header: h}); status != http.StatusOK || m.Via != "agent" || m.User != nil {
		t.Errorf("agent: %d %+v", status, m)
	}
	desk, err := tm.env.Service.StartDesktopSession(context.Background(), auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	if status, m := tm.me(t, testenv.Request{Token: desk.Token}); status != http.StatusOK || m.Via != "desktop" {
		t.Errorf("desktop: %d %+v", status, m)
	}
}

// TestTeamNeedsPublicURL: team mode without a public URL does not start.
func TestTeamNeedsPublicURL(t *testing.T) {
	_, err := server.Start(context.Background(), server.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		OIDC: auth.OIDC{Issuer: "http://127.0.0.1:1", ClientID: "agentdesk"}})
	if err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Fatalf("started without a public URL: %v", err)
	}
}

// TestTeamRolesAndProjects: a session acts in one project at a time (the header or the
// path; by default the first membership) with its role's scopes there; an owner's
// session manages owners.
func TestTeamRolesAndProjects(t *testing.T) { pgtest.Engines(t, testTeamRolesAndProjects) }

func testTeamRolesAndProjects(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleOwner)
	side := tm.env.NewProject(t, "Side")
	if _, err := tm.env.Service.AddMember(context.Background(), auth.Owner(side.ID),
		service.AddMemberInput{Email: "dana@example.com", Role: model.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	other := tm.env.NewProject(t, "Not hers")
	cookie := tm.signIn(t, tm.browser(t), "dana")
	status, m := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
	if status != http.StatusOK || m.Project.ID != tm.env.Project.ID || len(m.Memberships) != 2 || !slices.Contains(m.Scopes, auth.Admin) {
		t.Fatalf("default project: %d %+v", status, m)
	}
	csrf := m.CSRFToken

	inSide := http.Header{"X-Agentdesk-Project": {side.ID}}
	status, m = tm.me(t, withCookie(testenv.Request{Header: inSide}, cookie, ""))
	if status != http.StatusOK || m.Project.ID != side.ID || strings.Join(m.Scopes, ",") != "messaging:read,task:read" {
		t.Fatalf("in Side: %d %+v", status, m)
	}
	for _, tc := range []struct {
		name   string
		req    testenv.Request
		status int
	}{
		{"viewer cannot create a task", withCookie(testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"s"}`, Header: inSide}, cookie, csrf), http.StatusForbidden},
		{"viewer reads by path", withCookie(testenv.Request{Method: "GET", Path: "/api/projects/" + side.ID + "/tasks"}, cookie, ""), http.StatusOK},
		{"not a member by header", withCookie(testenv.Request{Method: "GET", Path: "/api/tasks", Header: http.Header{"X-Agentdesk-Project": {other.ID}}}, cookie, ""), http.StatusForbidden},
		{"owner adds an owner", withCookie(testenv.Request{Method: "POST", Path: "/graphql",
			Body: `{"query":"mutation { addMember(email: \"sam@example.com\", role: owner) { role } }"}`}, cookie, csrf), http.StatusOK},
	} {
		if r := tm.env.Do(t, tc.req); r.Status != tc.status || strings.Contains(string(r.Body), `"errors"`) {
			t.Errorf("%s: %d %s, want %d", tc.name, r.Status, r.Body, tc.status)
		}
	}
}
