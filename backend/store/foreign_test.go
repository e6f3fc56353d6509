package store_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// TestOtherProcessesChangesReachTheCaches: a second store on the same database (as the
// CLI beside a running server) assigns a task and revokes a token; the server's task
// list shows the assignment and the token is refused at once, though both were cached.
func TestOtherProcessesChangesReachTheCaches(t *testing.T) {
	dir := t.TempDir()
	srv := serve(t, dir)
	tok, ctx := srv.tok, context.Background()
	owner := auth.Owner(srv.project)
	task, err := srv.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "cached"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the token and the task's JSON are cached now
		if status, body := srv.call(t, "GET", "/api/tasks", ""); status != http.StatusOK || !strings.Contains(body, `"agent_id":null`) {
			t.Fatalf("list: %d %s", status, body)
		}
	}

	other, err := store.Open(ctx, server.DBPath(dir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cli := service.New(other, service.Options{})
	defer cli.Close()
	agent, err := cli.CreateAgent(ctx, owner, "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.AssignTask(ctx, owner, task.ID, &agent.ID, nil); err != nil {
		t.Fatal(err)
	}
	if status, body := srv.call(t, "GET", "/api/tasks", ""); status != http.StatusOK || !strings.Contains(body, fmt.Sprintf(`"agent_id":%d`, agent.ID)) {
		t.Fatalf("list after another process assigned the task: %d %s, want agent_id %d", status, body, agent.ID)
	}
	if err := cli.RevokeToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if status, body := srv.call(t, "GET", "/api/tasks", ""); status != http.StatusUnauthorized {
		t.Fatalf("a token revoked by another process: %d %s, want 401", status, body)
	}
}
