package app

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
)

// The server under the desktop window lets webhooks reach loopback and private
// addresses (its owner is the operator) and accepts the window's origins besides the
// configured ones.
func TestWindowConfigAllowsPrivateWebhooks(t *testing.T) {
	cfg := windowConfig(server.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", AllowedOrigins: []string{"https://ops.example.com"}})
	if !slices.Contains(cfg.AllowedOrigins, "https://ops.example.com") || !slices.Contains(cfg.AllowedOrigins, WindowOrigins[0]) {
		t.Fatalf("origins %q", cfg.AllowedOrigins)
	}
	ctx := context.Background()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	ps, err := srv.Service.Projects(ctx, auth.Owner(""))
	if err != nil || len(ps) != 1 {
		t.Fatalf("projects: %v %v", ps, err)
	}
	tasksOnly := []string{"task.created"} // none is written: nothing is sent to them
	for _, url := range []string{"http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://192.168.1.20/hook"} {
		if _, err := srv.Service.CreateWebhook(ctx, auth.Owner(ps[0].ID), service.WebhookInput{URL: &url, Events: &tasksOnly}); err != nil {
			t.Errorf("create webhook to %s under the window: %v", url, err)
		}
	}
}
