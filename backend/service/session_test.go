package service_test

import (
	"context"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

func TestDesktopSessionSignsInToPersonalWithEveryPlatformScope(t *testing.T) {
	pgtest.Engines(t, testDesktopSessionSignsInToPersonalWithEveryPlatformScope)
}

func testDesktopSessionSignsInToPersonalWithEveryPlatformScope(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	owner := auth.Owner("")
	// A later project must not change which project the window opens on.
	if _, err := svc.CreateProject(ctx, owner, "Later", ""); err != nil {
		t.Fatal(err)
	}
	sess, err := svc.StartDesktopSession(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if !auth.LooksLikeToken(sess.Token) {
		t.Fatalf("session token %q does not have the token format", sess.Token)
	}
	p, err := svc.AuthenticateToken(ctx, sess.Token)
	if err != nil {
		t.Fatalf("the session token does not authenticate: %v", err)
	}
	projects, err := svc.Projects(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if p.ProjectID != projects[0].ID || projects[0].Name != service.DefaultProjectName || sess.ProjectID != p.ProjectID {
		t.Fatalf("session project %s, want Personal %s", p.ProjectID, projects[0].ID)
	}
	for _, sc := range auth.PlatformScopes {
		if !p.Has(sc) {
			t.Errorf("session lacks the %s scope (has %v)", sc, p.Scopes)
		}
	}
	if p.Has(auth.VectorRead) || p.TokenType != "platform" {
		t.Errorf("session must be a platform token only, got type %q scopes %v", p.TokenType, p.Scopes)
	}
	// It administers its project, as the owner's UI needs (admin scope).
	if _, _, err := svc.CreateToken(ctx, p, service.CreateTokenInput{Name: "ci", Scopes: []string{auth.TaskRead}}); err != nil {
		t.Fatalf("session cannot administer its project: %v", err)
	}
	// Stored like every token: a row with a hint, found by the value's hash only.
	toks, err := svc.Tokens(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tk := range toks {
		if tk.ID == sess.TokenID {
			found = true
			if tk.Name != service.DesktopSessionTokenName || tk.Hint != auth.TokenHint(sess.Token) || strings.Contains(tk.Hint, sess.Token[len(auth.TokenPrefix)+4:]) {
				t.Errorf("stored session token = %+v", tk)
			}
		}
	}
	if !found {
		t.Fatalf("session token %d not in the project's tokens", sess.TokenID)
	}
}

func TestDesktopSessionEndsRevokedAndStaleSessionsAreSwept(t *testing.T) {
	pgtest.Engines(t, testDesktopSessionEndsRevokedAndStaleSessionsAreSwept)
}

func testDesktopSessionEndsRevokedAndStaleSessionsAreSwept(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	owner := auth.Owner("")

	first, err := svc.StartDesktopSession(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.EndDesktopSession(ctx, owner, first); err != nil {
		t.Fatal(err)
	}
	_, err = svc.AuthenticateToken(ctx, first.Token)
	if errs.CodeOf(err) != errs.Unauthenticated || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a closed window's token must be refused as revoked, got %v", err)
	}

	// A window killed without closing leaves its token; the next window revokes it.
	crashed, err := svc.StartDesktopSession(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	next, err := svc.StartDesktopSession(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if next.Token == crashed.Token {
		t.Fatal("two sessions got the same token value")
	}
	if _, err := svc.AuthenticateToken(ctx, crashed.Token); errs.CodeOf(err) != errs.Unauthenticated {
		t.Fatalf("a stale session token must be revoked by the next window, got %v", err)
	}
	if _, err := svc.AuthenticateToken(ctx, next.Token); err != nil {
		t.Fatalf("the new session must work: %v", err)
	}
}

func TestDesktopSessionIsTheOwnersOnly(t *testing.T) {
	pgtest.Engines(t, testDesktopSessionIsTheOwnersOnly)
}

func testDesktopSessionIsTheOwnersOnly(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	owner := auth.Owner("")
	sess, err := svc.StartDesktopSession(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.AuthenticateToken(ctx, sess.Token)
	if err != nil {
		t.Fatal(err)
	}
	// Neither a token holder (even the window itself, even with admin) nor an agent may
	// mint or end a desktop session.
	for _, who := range []*auth.Principal{p, auth.Agent(sess.ProjectID, 1, "a"), nil} {
		if _, err := svc.StartDesktopSession(ctx, who); err == nil {
			t.Errorf("%v started a desktop session", who)
		}
		if err := svc.EndDesktopSession(ctx, who, sess); err == nil {
			t.Errorf("%v ended a desktop session", who)
		}
	}
	// Nobody can make a token that the sweep of stale sessions would revoke.
	_, _, err = svc.CreateToken(ctx, p, service.CreateTokenInput{Name: service.DesktopSessionTokenName, Scopes: []string{auth.TaskRead}})
	if errs.CodeOf(err) != errs.InvalidArgument {
		t.Fatalf("the reserved name must be refused with invalid_argument, got %v", err)
	}
	// Nor rotate the window's token into one whose value someone holds.
	if _, _, err := svc.RotateToken(ctx, p, sess.TokenID); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("rotating the desktop session must be refused with conflict, got %v", err)
	}
	if _, err := svc.AuthenticateToken(ctx, sess.Token); err != nil {
		t.Fatalf("refused calls must not end the session: %v", err)
	}
}
