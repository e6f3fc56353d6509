package server_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/server"
)

// TestFreePortIfTaken: with its address taken, a server fails with a message naming
// --addr; the desktop window's (FreePortIfTaken) listens on a free port of the same
// host instead, and serves there.
func TestFreePortIfTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ctx := context.Background()
	cfg := server.Config{DataDir: t.TempDir(), Addr: held.Addr().String()}
	if srv, err := server.Start(ctx, cfg); err == nil || !strings.Contains(err.Error(), "already in use") || !strings.Contains(err.Error(), "--addr") {
		if srv != nil {
			srv.Shutdown(ctx)
		}
		t.Fatalf("address taken, no fallback: %v", err)
	}
	cfg.FreePortIfTaken = true
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("address taken, with the fallback: %v", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	if srv.URL() == "http://"+held.Addr().String() || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("listening on %s, want another port of 127.0.0.1", srv.URL())
	}
	res, err := http.Get(srv.URL() + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz on the free port: %v %v", res, err)
	}
	res.Body.Close()
}
