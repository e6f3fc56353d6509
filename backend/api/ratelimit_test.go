package api_test

import (
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// limitedServer is a team mode server behind a proxy on this machine (--trusted-proxies
// 127.0.0.1/32, when proxied) with a manual clock. The provider is never asked: the
// refused callbacks here fail before discovery.
func limitedServer(t *testing.T, engine string, proxied bool) (*testenv.Env, *jobstest.ManualClock) {
	t.Helper()
	var proxies string
	if proxied {
		proxies = "127.0.0.1/32"
	}
	trusted, err := server.ParseTrustedProxies(proxies)
	if err != nil {
		t.Fatal(err)
	}
	clock := jobstest.NewManualClock(time.Now())
	env := testenv.StartWithOn(t, engine, server.Config{Clock: clock, TrustedProxies: trusted, PublicURL: teamPublicURL,
		OIDC: auth.OIDC{PublicURL: teamPublicURL, Issuer: "http://127.0.0.1:1", ClientID: "agentdesk", Scopes: []string{"openid"}}})
	return env, clock
}

// from is a request as the proxy forwards it from a client (X-Forwarded-For), or as
// a loopback client sends it (xff "").
func from(xff string, r testenv.Request) testenv.Request {
	if xff != "" {
		r.Header = http.Header{"X-Forwarded-For": {xff}}
	}
	return r
}

func expectLimited(t *testing.T, r *testenv.Response, what, retryAfter string) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") != retryAfter {
		t.Fatalf("%s: %d Retry-After %q %s, want 429 with Retry-After %s", what, r.Status, r.Header.Get("Retry-After"), r.Body, retryAfter)
	}
	if !strings.Contains(what, "login") && !strings.Contains(what, "callback") && !strings.Contains(what, "GraphQL") && r.ErrorCode() != "rate_limited" {
		t.Fatalf("%s: code %q, want rate_limited", what, r.ErrorCode())
	}
}

// TestRateLimitRefusedCredentials: behind a trusted proxy, past 10 refused credentials
// from one client address in a minute, each further refused credential of that
// address is answered 429 with Retry-After until the minute frees a slot; a valid
// credential from it is never refused (REST, GraphQL, the event stream), nor are
// /login and the callback limited by it. Other addresses and loopback clients are not
// limited, and the client address is the rightmost X-Forwarded-For address that is
// not the proxy.
func TestRateLimitRefusedCredentials(t *testing.T) {
	pgtest.Engines(t, testRateLimitRefusedCredentials)
}

func testRateLimitRefusedCredentials(t *testing.T, engine string) {
	env, clock := limitedServer(t, engine, true)
	good := env.Token(t, env.Project.ID, auth.TaskRead)
	bad := "adk_" + strings.Repeat("0", 40)
	tasks := func(xff, token string) *testenv.Response {
		return env.Do(t, from(xff, testenv.Request{Method: "GET", Path: "/api/tasks", Token: token}))
	}
	const client = "203.0.113.7"
	for i := range 10 {
		if r := tasks(client, bad); r.Status != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d %s, want 401", i+1, r.Status, r.Body)
		}
	}
	expectLimited(t, tasks(client, bad), "11th bad token", "60")
	if r := tasks(client, good); r.Status != http.StatusOK {
		t.Fatalf("good token from the limited address: %d %s, want 200", r.Status, r.Body)
	}
	if r := env.Do(t, from(client, testenv.Request{Method: "POST", Path: "/graphql", Token: good, Body: `{"query":"{ tasks { id } }"}`})); r.Status != http.StatusOK {
		t.Fatalf("GraphQL with a good token from the limited address: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, from(client, testenv.Request{Method: "GET", Path: "/api/events?access_token=" + good})); r.Status == http.StatusTooManyRequests || r.Status == http.StatusUnauthorized {
		t.Fatalf("event stream with a good token from the limited address: %d %s", r.Status, r.Body)
	}
	// /login is limited on its own (the provider here never answers: 503), and a
	// callback from the limited address is checked as any other.
	if r := env.Do(t, from(client, testenv.Request{Method: "GET", Path: "/login"})); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("/login from an address limited for refused credentials: %d %s, want 503 (provider down)", r.Status, r.Body)
	}
	if r := env.Do(t, from(client, testenv.Request{Method: "GET", Path: "/auth/callback?state=x&code=y"})); r.Status != http.StatusUnauthorized {
		t.Fatalf("/auth/callback from the limited address: %d %s, want 401", r.Status, r.Body)
	}
	if r := tasks(client, ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("no credentials from the limited address: %d %s, want 401 (nothing to limit)", r.Status, r.Body)
	}
	if r := tasks("203.0.113.8", bad); r.Status != http.StatusUnauthorized {
		t.Fatalf("bad token from another address: %d %s, want 401", r.Status, r.Body)
	}
	// The client is the rightmost address the proxy did not add itself: a client
	// cannot pick its address by sending X-Forwarded-For of its own.
	if r := tasks(client+", 203.0.113.9", bad); r.Status != http.StatusUnauthorized {
		t.Fatalf("client 203.0.113.9 claiming to be forwarded for %s: %d %s, want 401", client, r.Status, r.Body)
	}
	expectLimited(t, tasks("203.0.113.9, "+client, bad), "limited client claiming another address", "60")
	expectLimited(t, tasks(client+", 127.0.0.1", bad), "limited client through two trusted hops", "60")
	// Loopback clients (agents and scripts on this machine) are never limited.
	for i := range 30 {
		if r := tasks("", bad); r.Status != http.StatusUnauthorized {
			t.Fatalf("loopback bad token %d: %d %s, want 401", i+1, r.Status, r.Body)
		}
	}

	// The window frees a slot once the oldest failure is a minute old.
	clock.Advance(59 * time.Second)
	expectLimited(t, tasks(client, bad), "after 59 s", "1")
	clock.Advance(time.Second)
	if r := tasks(client, bad); r.Status != http.StatusUnauthorized {
		t.Fatalf("bad token after the window: %d %s, want 401", r.Status, r.Body)
	}
}

// TestRateLimitCountsOnlyFailures: callbacks anyone can make a browser send (the
// provider's ?error=, a state without the browser's login cookie) count nothing: 20 of
// them leave the address free.
func TestRateLimitCountsOnlyFailures(t *testing.T) {
	pgtest.Engines(t, testRateLimitCountsOnlyFailures)
}

func testRateLimitCountsOnlyFailures(t *testing.T, engine string) {
	env, _ := limitedServer(t, engine, true)
	const client = "198.51.100.20"
	bad := "adk_" + strings.Repeat("0", 40)
	for i := range 20 {
		for _, path := range []string{"/auth/callback?error=x", "/auth/callback?state=nope&code=x"} {
			if r := env.Do(t, from(client, testenv.Request{Method: "GET", Path: path})); r.Status != http.StatusUnauthorized {
				t.Fatalf("%s, %d: %d %s, want 401", path, i+1, r.Status, r.Body)
			}
		}
	}
	if r := env.Do(t, from(client, testenv.Request{Method: "GET", Path: "/api/tasks", Token: bad})); r.Status != http.StatusUnauthorized {
		t.Fatalf("a bad token after 40 unauthenticated callbacks: %d %s, want 401 (not limited)", r.Status, r.Body)
	}
}

// TestRateLimitUntrustedProxy: without --trusted-proxies, X-Forwarded-For is ignored:
// every request here comes from loopback, which is never limited.
func TestRateLimitUntrustedProxy(t *testing.T) { pgtest.Engines(t, testRateLimitUntrustedProxy) }

func testRateLimitUntrustedProxy(t *testing.T, engine string) {
	env, _ := limitedServer(t, engine, false)
	bad := "adk_" + strings.Repeat("0", 40)
	for i := range 30 {
		r := env.Do(t, from("203.0.113.7", testenv.Request{Method: "GET", Path: "/api/tasks", Token: bad}))
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("bad token %d with an X-Forwarded-For nobody trusts: %d %s, want 401", i+1, r.Status, r.Body)
		}
	}
}

// TestRateLimitFailedVerifications: sign-ins whose ID token fails verification count
// against the address: past 10, the next is answered 429. A sign-in that verifies is
// never refused for it, nor is a good token.
func TestRateLimitFailedVerifications(t *testing.T) {
	pgtest.Engines(t, testRateLimitFailedVerifications)
}

func testRateLimitFailedVerifications(t *testing.T, engine string) {
	tm := startTeamWith(t, engine, teamSetup{proxied: true})
	tm.invite(t, "dana@example.com", model.RoleMember)
	const client = "198.51.100.30"
	c := tm.browserFrom(t, client)
	tm.st.wrongKey.Store(true)
	for i := range 10 {
		if status, page := callbackStatus(t, c, tm.toCallback(t, c, "dana", nil)); status != http.StatusUnauthorized || !strings.Contains(page, "signature") {
			t.Fatalf("wrongly signed ID token %d: %d %s", i+1, status, page)
		}
	}
	if status, page := callbackStatus(t, c, tm.toCallback(t, c, "dana", nil)); status != http.StatusTooManyRequests {
		t.Fatalf("11th wrongly signed ID token: %d %s, want 429", status, page)
	}
	tm.st.wrongKey.Store(false)
	tm.signIn(t, c, "dana") // a valid sign-in from the limited address
	good := tm.env.Token(t, tm.env.Project.ID, auth.TaskRead)
	r := tm.env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: good, Header: http.Header{"X-Forwarded-For": {client}}})
	if r.Status != http.StatusOK {
		t.Fatalf("good token from the limited address: %d %s", r.Status, r.Body)
	}
}

// TestRateLimitLogin: /login, which needs no credential and stores a login under way,
// is limited on its own: 30 a minute per client address, then 429 with Retry-After.
// Other addresses and loopback are not limited by it.
func TestRateLimitLogin(t *testing.T) { pgtest.Engines(t, testRateLimitLogin) }

func testRateLimitLogin(t *testing.T, engine string) {
	tm := startTeamWith(t, engine, teamSetup{proxied: true})
	login := func(xff string) *testenv.Response {
		req, _ := http.NewRequest("GET", tm.env.URL+"/login", nil)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return &testenv.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	}
	const client = "198.51.100.40"
	for i := range 30 {
		if r := login(client); r.Status != http.StatusFound {
			t.Fatalf("/login %d: %d %s, want 302", i+1, r.Status, r.Body)
		}
	}
	expectLimited(t, login(client), "31st /login", "60")
	if r := login("198.51.100.41"); r.Status != http.StatusFound {
		t.Fatalf("/login from another address: %d %s", r.Status, r.Body)
	}
	for i := range 40 {
		if r := login(""); r.Status != http.StatusFound {
			t.Fatalf("loopback /login %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	tm.clock.Advance(time.Minute)
	if r := login(client); r.Status != http.StatusFound {
		t.Fatalf("/login a minute later: %d %s", r.Status, r.Body)
	}
}
