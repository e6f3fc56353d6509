package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/oidcop"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTeamUnverifiedEmail: an email the provider does not say is verified takes no
// invitation, whether it comes in the ID token or (as zitadel gives it, leaving
// email_verified out when it is false) only from userinfo; --oidc-trust-email takes it.
func TestTeamUnverifiedEmail(t *testing.T) { pgtest.Engines(t, testTeamUnverifiedEmail) }

func testTeamUnverifiedEmail(t *testing.T, engine string) {
	for _, tc := range []struct {
		name  string
		setup teamSetup
		taken bool
	}{
		{"zitadel: email from userinfo only, email_verified left out", teamSetup{}, false},
		{"email in the ID token without email_verified", teamSetup{provider: func(o *oidcop.Options) { o.EmailInIDToken = true }}, false},
		{"--oidc-trust-email", teamSetup{trustEmail: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := startTeamWith(t, engine, tc.setup)
			tm.invite(t, "inv@acme.test", model.RoleAdmin)
			c := tm.browser(t)
			status, page := callbackStatus(t, c, tm.toCallback(t, c, "ivy", nil))
			if !tc.taken {
				if status != http.StatusForbidden || !strings.Contains(page, "no verified email") {
					t.Fatalf("unverified inv@acme.test took the admin invitation: %d %s", status, page)
				}
				return
			}
			if status != http.StatusFound {
				t.Fatalf("trusted email: %d %s", status, page)
			}
			var cookie string
			u, _ := url.Parse(teamPublicURL)
			for _, ck := range c.Jar.Cookies(u) {
				if ck.Name == "agentdesk_session" {
					cookie = ck.Value
				}
			}
			if s, m := tm.me(t, withCookie(testenv.Request{}, cookie, "")); s != http.StatusOK || m.User.Email != "inv@acme.test" || m.Memberships[0].Role != model.RoleAdmin {
				t.Fatalf("trusted email's session: %d %+v", s, m)
			}
		})
	}
}

// TestTeamChangedEmailClaimsNothing: a person who changes their email at the provider
// to someone else's address (unverified) keeps their verified one here, and is not the
// person an owner of another project invites at that address later.
func TestTeamChangedEmailClaimsNothing(t *testing.T) {
	pgtest.Engines(t, testTeamChangedEmailClaimsNothing)
}

func testTeamChangedEmailClaimsNothing(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	tm.signIn(t, tm.browser(t), "dana")

	tm.p.SetEmail("u1", "ceo@acme.test", false)
	cookie := tm.signIn(t, tm.browser(t), "dana")
	if s, m := tm.me(t, withCookie(testenv.Request{}, cookie, "")); s != http.StatusOK || m.User.Email != "dana@example.com" {
		t.Fatalf("after an unverified email change, /api/me: %d %+v (the email must stay dana@example.com)", s, m.User)
	}

	ctx := context.Background()
	other, err := tm.env.Service.CreateProject(ctx, auth.Owner(""), "Board", "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := tm.env.Service.AddMember(ctx, auth.Owner(other.ID), service.AddMemberInput{Email: "ceo@acme.test", Role: model.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	if _, me := tm.me(t, withCookie(testenv.Request{}, cookie, "")); m.UserID == me.User.ID || len(me.Memberships) != 1 {
		t.Fatalf("the invitation of ceo@acme.test went to Dana (user %d): memberships %+v", me.User.ID, me.Memberships)
	}
}

// TestTeamSignOutSendsIDTokenHint: against a provider that, as Hydra, refuses a
// post_logout_redirect_uri without a valid id_token_hint, signing out ends the
// provider's session and comes back to agentdesk.
func TestTeamSignOutSendsIDTokenHint(t *testing.T) {
	pgtest.Engines(t, testTeamSignOutSendsIDTokenHint)
}

func testTeamSignOutSendsIDTokenHint(t *testing.T, engine string) {
	tm := startTeamWith(t, engine, teamSetup{provider: func(o *oidcop.Options) { o.RequireIDTokenHint = true }})
	tm.invite(t, "dana@example.com", model.RoleMember)
	c := tm.browser(t)
	cookie := tm.signIn(t, c, "dana")
	_, m := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
	r := tm.env.Do(t, withCookie(testenv.Request{Method: "POST", Path: "/logout", Header: http.Header{"Accept": {"application/json"}}}, cookie, m.CSRFToken))
	var out struct{ Redirect string }
	r.JSON(t, &out)
	if r.Status != http.StatusOK || !strings.HasPrefix(out.Redirect, tm.op+"/end_session?") {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	resp := send(t, c, "GET", out.Redirect, nil) // the browser goes to the provider's end_session
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != teamPublicURL+"/" {
		t.Fatalf("the provider's end_session: %d to %q, want 302 back to %s/", resp.StatusCode, resp.Header.Get("Location"), teamPublicURL)
	}
}

// TestTeamRefusedSignInLogsReason: a refused sign-in logs its reason, as the
// troubleshooting table promises, not only the status of its request.
func TestTeamRefusedSignInLogsReason(t *testing.T) {
	tm := startTeam(t, "sqlite")
	var logs testenv.SyncBuffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for _, tc := range []struct{ user, reason string }{
		{"eve", "eve@elsewhere.org is not invited"},
		{"ivy", "the provider gave no verified email"},
	} {
		c := tm.browser(t)
		if status, _ := callbackStatus(t, c, tm.toCallback(t, c, tc.user, nil)); status != http.StatusForbidden {
			t.Fatalf("%s: %d, want 403", tc.user, status)
		}
		if !strings.Contains(logs.String(), "sign-in refused") || !strings.Contains(logs.String(), tc.reason) {
			t.Fatalf("the log does not say why %s was refused (%q):\n%s", tc.user, tc.reason, logs.String())
		}
	}
}
