package graphql_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/graphql"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// Handler is a plain http.Handler: it serves on a bare net/http server, without gin.
func TestHandlerOnPlainHTTP(t *testing.T) { pgtest.Engines(t, testHandlerOnPlainHTTP) }

func testHandlerOnPlainHTTP(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, auth.TaskRead)
	token := func(r *http.Request) (string, error) {
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			return v, nil
		}
		return "", errs.Unauth("missing credentials")
	}
	srv := httptest.NewServer(graphql.Handler(env.Service, token))
	defer srv.Close()

	post := func(token string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"query":"{ viewer { kind } }"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post(tok); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("with a token: %d %s, want 200 application/json", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := post(""); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("without a token: %d %q, want 401 with WWW-Authenticate: Bearer", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// WithPage: a browser asking for /graphql gets the given GraphiQL page under
// GraphiQLCSP (scripts from 'self' only, no inline script); without it, the plain page.
func TestGraphiQLPage(t *testing.T) { pgtest.Engines(t, testGraphiQLPage) }

func testGraphiQLPage(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	token := func(*http.Request) (string, error) { return "", errs.Unauth("missing credentials") }
	page := []byte(`<!doctype html><script type="module" src="/assets/graphiql-x.js"></script>`)
	for _, c := range []struct {
		name     string
		opts     []graphql.Option
		wantBody string
		wantCSP  bool
	}{
		{"with the built page", []graphql.Option{graphql.WithPage(page)}, string(page), true},
		{"without", nil, "agentdesk GraphQL", false},
	} {
		srv := httptest.NewServer(graphql.Handler(env.Service, token, c.opts...))
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		_, _ = io.Copy(&body, resp.Body)
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), c.wantBody) {
			t.Errorf("%s: %d %.200s, want 200 with %q", c.name, resp.StatusCode, body.String(), c.wantBody)
		}
		if got := resp.Header.Get("Content-Security-Policy") == graphql.GraphiQLCSP; got != c.wantCSP {
			t.Errorf("%s: CSP %q", c.name, resp.Header.Get("Content-Security-Policy"))
		}
	}
	if !strings.Contains(graphql.GraphiQLCSP, "script-src 'self';") || strings.Contains(graphql.GraphiQLCSP, "unsafe-eval") ||
		!strings.Contains(graphql.GraphiQLCSP, "frame-ancestors 'none'") {
		t.Errorf("GraphiQLCSP is not strict: %s", graphql.GraphiQLCSP)
	}
}
