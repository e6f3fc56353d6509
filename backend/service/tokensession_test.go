package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTokenSessionEndsWithItsToken: a browser session started with a token acts as the
// token, and what a long-lived connection checks (CheckCredentials) fails once the
// token is rotated away, or the session signed out; another session of the token stays.
func TestTokenSessionEndsWithItsToken(t *testing.T) {
	pgtest.Engines(t, testTokenSessionEndsWithItsToken)
}

func testTokenSessionEndsWithItsToken(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	projects, err := svc.Projects(ctx, auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	owner := auth.Owner(projects[0].ID)
	value, tok, err := svc.CreateToken(ctx, owner, service.CreateTokenInput{Name: "browser", Scopes: []string{auth.TaskRead}})
	if err != nil {
		t.Fatal(err)
	}
	bearer, err := svc.AuthenticateToken(ctx, value)
	if err != nil {
		t.Fatal(err)
	}
	start := func() *auth.Principal {
		t.Helper()
		cookie, err := svc.StartTokenSession(ctx, bearer, "Firefox", "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		p, err := svc.Authenticate(ctx, service.Credentials{Where: service.WhereEvents, Session: cookie, Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != auth.KindToken || p.TokenID != tok.ID || p.ProjectID != owner.ProjectID || p.SessionHash == nil || p.CSRFToken == "" {
			t.Fatalf("the session's principal: %+v", p)
		}
		return p
	}
	signedOut, kept := start(), start()
	if _, err := svc.StartTokenSession(ctx, signedOut, "", ""); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a session starting a session: %v, want forbidden", err)
	}

	if _, err := svc.EndSession(ctx, signedOut); err != nil {
		t.Fatal(err)
	}
	if err := svc.CheckCredentials(ctx, signedOut); errs.CodeOf(err) != errs.Unauthenticated || !strings.Contains(err.Error(), "signed out") {
		t.Errorf("a signed-out session: %v", err)
	}
	if err := svc.CheckCredentials(ctx, kept); err != nil {
		t.Errorf("the token's other session: %v", err)
	}

	if _, _, err := svc.RotateToken(ctx, owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.CheckCredentials(ctx, kept); errs.CodeOf(err) != errs.Unauthenticated || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("the session of a rotated token: %v", err)
	}
}
