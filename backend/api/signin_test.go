package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

type signInBody struct {
	OIDC    *struct{ Name, LoginURL string }
	Session bool
}

func signInOptions(t *testing.T, env *testenv.Env, cookie ...string) signInBody {
	t.Helper()
	h := http.Header{}
	for _, c := range cookie {
		h.Add("Cookie", c)
	}
	r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/signin", Header: h})
	var b signInBody
	if r.Status != http.StatusOK {
		t.Fatalf("/api/signin: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &b)
	return b
}

// TestSignInOptions: the sign-in page learns, without a credential, whether to offer
// "Sign in with <provider>": the provider's name (--oidc-provider-name, by default the
// issuer's host) and where to go.
func TestSignInOptions(t *testing.T) { pgtest.Engines(t, testSignInOptions) }

func testSignInOptions(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	u, _ := url.Parse(tm.op)
	if b := signInOptions(t, tm.env); b.OIDC == nil || b.OIDC.Name != u.Hostname() || b.OIDC.LoginURL != "/login" {
		t.Errorf("team mode, no provider name: %+v", b.OIDC)
	}

	named := testenv.StartWithOn(t, engine, server.Config{PublicURL: teamPublicURL, OIDC: auth.OIDC{PublicURL: teamPublicURL,
		Issuer: "https://id.example.com/realms/acme", ClientID: "agentdesk", ProviderName: "Keycloak"}})
	if b := signInOptions(t, named); b.OIDC == nil || b.OIDC.Name != "Keycloak" || b.OIDC.LoginURL != "/login" {
		t.Errorf("named provider: %+v", b.OIDC)
	}

	if b := signInOptions(t, testenv.StartOn(t, engine)); b.OIDC != nil {
		t.Errorf("without team mode: %+v", b.OIDC)
	}
}

// TestSignInOptionsSession: /api/signin says whether the browser sent a session cookie,
// so that the web UI asks GET /api/me only then and a first visit logs no 401 (issue 43
// item 10). A cookie that is no longer good counts too: /api/me then says why.
func TestSignInOptionsSession(t *testing.T) {
	tm := startTeam(t, "sqlite")
	if b := signInOptions(t, tm.env); b.Session {
		t.Errorf("no cookie: session %v", b.Session)
	}
	if b := signInOptions(t, tm.env, "agentdesk_session=stale"); !b.Session {
		t.Errorf("with a session cookie: session %v", b.Session)
	}
	if b := signInOptions(t, tm.env, "other=1"); b.Session {
		t.Errorf("another cookie only: session %v", b.Session)
	}
}
