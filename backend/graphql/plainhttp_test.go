package graphql_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/graphql"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// Handler is a plain http.Handler: it serves on a bare net/http server, without gin.
func TestHandlerOnPlainHTTP(t *testing.T) {
	env := testenv.Start(t)
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
