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
	OIDC *struct{ Name, LoginURL string }
}

func signInOptions(t *testing.T, env *testenv.Env) signInBody {
	t.Helper()
	r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/signin"})
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
