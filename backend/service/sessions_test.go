package service_test

import (
	"context"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestOwnSessions: a session records where it signed in from (the User-Agent cut to
// 200 characters); only a session has sessions, and only its owner's are found.
func TestOwnSessions(t *testing.T) { pgtest.Engines(t, testOwnSessions) }

func testOwnSessions(t *testing.T, engine string) {
	ctx := context.Background()
	svc := teamService(t, engine)
	signIn := func(subject, agent string) *auth.Principal {
		t.Helper()
		v, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: subject, Email: subject + "@corp.example", EmailVerified: true,
			Name: subject, UserAgent: agent, Address: "203.0.113.7"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := svc.Authenticate(ctx, service.Credentials{Where: service.WhereREST, Session: v, Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("é", 150) + strings.Repeat("x", 150) + "\xff"
	lee := signIn("lee", long)
	list, err := svc.Sessions(ctx, lee)
	if err != nil || len(list) != 1 || !list[0].Current || list[0].Address != "203.0.113.7" {
		t.Fatalf("Lee's sessions: %+v %v", list, err)
	}
	if ua := list[0].UserAgent; utf8.RuneCountInString(ua) != service.MaxUserAgentLen || !utf8.ValidString(ua) || !strings.HasPrefix(long, ua) {
		t.Fatalf("User-Agent kept as %q (%d characters), want the first %d", ua, utf8.RuneCountInString(ua), service.MaxUserAgentLen)
	}
	kim := signIn("kim", "Firefox")
	if _, err := svc.EndOwnSession(ctx, kim, list[0].ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("Kim ends Lee's session: %v, want not_found", err)
	}
	if _, err := svc.Sessions(ctx, auth.Owner("")); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("the local owner's sessions: %v, want forbidden", err)
	}
	if current, err := svc.EndOwnSession(ctx, lee, list[0].ID); err != nil || !current {
		t.Fatalf("Lee ends his own: current %v, %v", current, err)
	}
}
