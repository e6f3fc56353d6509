package store_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
)

// served is a real server on dir with a task:read+write token of its Personal project.
// (Not testenv: these tests stop the writer or open the database beside the server, so
// the shutdown's error is not the test's failure.)
type served struct {
	*server.Server
	project string
	token   string
	tok     *model.Token
}

// serve starts the server; it shuts down when the test ends.
func serve(t *testing.T, dir string) *served {
	t.Helper()
	srv, err := server.Start(context.Background(), server.Config{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	ctx := context.Background()
	ps, err := srv.Service.Projects(ctx, auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	s := &served{Server: srv, project: ps[0].ID}
	s.token, s.tok, err = srv.Service.CreateToken(ctx, auth.Owner(s.project),
		service.CreateTokenInput{Name: "test", Type: "platform", Scopes: []string{auth.TaskRead, auth.TaskWrite}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends a REST request with the token; it returns the status and the body.
func (s *served) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
