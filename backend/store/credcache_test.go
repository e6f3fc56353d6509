package store_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// TestTokenCache: a token once looked up costs no query; revoking or rotating it, through
// this store or through another one on the same file (as the command line beside a
// running server), counts with the very next request, though it was cached.
func TestTokenCache(t *testing.T) {
	dir := t.TempDir()
	srv := serve(t, dir)
	ctx, owner := context.Background(), auth.Owner(srv.project)
	st := srv.Store()

	authenticate := func(token string) error {
		_, err := srv.Service.AuthenticateToken(ctx, token)
		return err
	}
	if err := authenticate(srv.token); err != nil {
		t.Fatal(err)
	}
	before := st.ReadQueries()
	for range 3 {
		if err := authenticate(srv.token); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.ReadQueries() - before; n != 0 {
		t.Fatalf("3 lookups of a cached token ran %d queries, want 0", n)
	}

	// Through this store: a revocation.
	if err := srv.Service.RevokeToken(ctx, owner, srv.tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := authenticate(srv.token); err == nil {
		t.Fatal("a revoked token still authenticates")
	}

	// Through this store: a rotation (the old value ends, the new one works).
	value, tok, err := srv.Service.CreateToken(ctx, owner, service.CreateTokenInput{Name: "rotated", Type: "platform", Scopes: []string{auth.TaskRead}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := authenticate(value); err != nil {
			t.Fatal(err)
		}
	}
	newValue, rotated, err := srv.Service.RotateToken(ctx, owner, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := authenticate(value); err == nil {
		t.Fatal("a rotated token's old value still authenticates")
	}
	if err := authenticate(newValue); err != nil {
		t.Fatalf("the rotated token's new value: %v", err)
	}

	// Through another store on the file: its RevokeToken returns, and the server's
	// next request with the token is refused.
	other, err := store.Open(ctx, server.DBPath(dir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cli := service.New(other, service.Options{})
	defer cli.Close()
	for range 2 {
		if err := authenticate(newValue); err != nil {
			t.Fatal(err)
		}
	}
	if err := cli.RevokeToken(ctx, owner, rotated.ID); err != nil {
		t.Fatal(err)
	}
	if err := authenticate(newValue); err == nil {
		t.Fatal("a token another process revoked still authenticates")
	}
	srv.token = newValue
	if status, body := srv.call(t, "GET", "/api/tasks", ""); status != http.StatusUnauthorized {
		t.Fatalf("REST with the revoked token: %d %s, want 401", status, body)
	}
}
