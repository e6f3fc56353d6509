package service_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func teamService(t *testing.T, engine string) *service.Service {
	t.Helper()
	st := testenv.OpenStore(t, engine, store.Options{Synchronous: "NORMAL"})
	svc := service.New(st, service.Options{OIDC: auth.OIDC{PublicURL: "https://agentdesk.example.com",
		Issuer: "https://id.example.com", ClientID: "agentdesk", AllowedDomains: []string{"corp.example"}}})
	t.Cleanup(func() {
		svc.Close()
		st.Close()
	})
	if err := svc.EnsureDefaultProject(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestSignInPeople: who a verified identity becomes. An email the provider does not say
// is verified (email_verified false, or not said at all) matches no invitation and no
// allowed domain, and replaces no known email. Verified email and name are refreshed
// at every sign-in.
func TestSignInPeople(t *testing.T) { pgtest.Engines(t, testSignInPeople) }

func testSignInPeople(t *testing.T, engine string) {
	ctx := context.Background()
	svc := teamService(t, engine)
	_, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "s1", Email: "una@corp.example", Name: "Una"})
	if errs.CodeOf(err) != errs.Forbidden || !strings.Contains(err.Error(), "no verified email") {
		t.Fatalf("unverified email in an allowed domain: %v, want forbidden", err)
	}
	me := func(value string) *service.Me {
		t.Helper()
		p, err := svc.Authenticate(ctx, service.Credentials{Where: service.WhereREST, Session: value, Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := svc.Me(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	value, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "s2", Email: "Lee@Corp.example", EmailVerified: true, Name: "Lee"})
	if err != nil {
		t.Fatalf("allowed domain: %v", err)
	}
	if m := me(value); m.Via != "session" || m.User.Email != "lee@corp.example" || m.User.Name != "Lee" || m.Memberships[0].Role != "member" {
		t.Fatalf("first sign-in: %+v %+v", m, m.User)
	}
	value, err = svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "s2", Email: "lee.k@corp.example", EmailVerified: true, Name: "Lee K."})
	if err != nil {
		t.Fatal(err)
	}
	if m := me(value); m.User.Email != "lee.k@corp.example" || m.User.Name != "Lee K." || len(m.Memberships) != 1 {
		t.Fatalf("second sign-in did not refresh email and name: %+v %+v", m, m.User)
	}
	value, err = svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "s2", Email: "boss@corp.example", Name: "Lee K."})
	if err != nil {
		t.Fatal(err)
	}
	if m := me(value); m.User.Email != "lee.k@corp.example" {
		t.Fatalf("an unverified email replaced the verified one: %+v", m.User)
	}
	// Same subject at another issuer: another person, refused (not invited, domain not allowed).
	if _, err := svc.SignIn(ctx, service.Identity{Issuer: "https://other.example.com", Subject: "s2", Email: "x@elsewhere.org", EmailVerified: true}); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("other issuer: %v", err)
	}
}

// TestPruneSessions: sessions that can no longer be used (signed out a minute ago,
// idle too long, too old) are deleted; one just signed out stays a while, and a live one
// stays and keeps working.
// It counts the rows in SQLite's file: SQLite only.
func TestPruneSessions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir+"/agentdesk.db", store.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	svc := service.New(st, service.Options{Now: func() time.Time { return now }, OIDC: auth.OIDC{PublicURL: "https://agentdesk.example.com",
		Issuer: "https://id.example.com", ClientID: "agentdesk", AllowedDomains: []string{"corp.example"}}})
	t.Cleanup(func() {
		svc.Close()
		st.Close()
	})
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		t.Fatal(err)
	}
	signIn := func(subject string) string {
		t.Helper()
		v, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: subject, Email: subject + "@corp.example", EmailVerified: true, Name: subject})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	authn := func(v string) (*auth.Principal, error) {
		return svc.Authenticate(ctx, service.Credentials{Where: service.WhereREST, Session: v, Method: "GET"})
	}
	idle := signIn("idle")
	out := signIn("out")
	p, err := authn(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EndSession(ctx, p); err != nil {
		t.Fatal(err)
	}
	// Pruned at once, a signed-out session is kept a while: the streams still open on it
	// are told it was signed out, not that it is unknown.
	if err := svc.PruneSessions(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := authn(out); errs.CodeOf(err) != errs.Unauthenticated || !strings.Contains(err.Error(), "signed out") {
		t.Fatalf("the session just signed out, after pruning: %v, want unauthenticated, signed out", err)
	}
	now = now.Add(service.SessionIdle + time.Hour)
	live := signIn("live")

	count := func() int {
		t.Helper()
		db, err := sql.Open("sqlite", dir+"/agentdesk.db")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 3 {
		t.Fatalf("%d sessions before pruning, want 3", n)
	}
	if err := svc.PruneSessions(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d sessions after pruning, want 1 (the live one)", n)
	}
	if _, err := authn(live); err != nil {
		t.Fatalf("the live session after pruning: %v", err)
	}
	if _, err := authn(idle); errs.CodeOf(err) != errs.Unauthenticated {
		t.Fatalf("the idle session after pruning: %v, want unauthenticated", err)
	}
}

// TestPendingLoginsBounded: at most MaxPendingLogins logins are under way at once;
// past that /login is refused rate_limited until the oldest has expired, whoever
// begins it. (The logins here come from no network: no per-address limit applies.)
func TestPendingLoginsBounded(t *testing.T) { pgtest.Engines(t, testPendingLoginsBounded) }

func testPendingLoginsBounded(t *testing.T, engine string) {
	ctx := context.Background()
	st := testenv.OpenStore(t, engine, store.Options{Synchronous: "NORMAL"})
	now := time.Now()
	svc := service.New(st, service.Options{Now: func() time.Time { return now }, OIDC: auth.OIDC{PublicURL: "https://agentdesk.example.com",
		Issuer: "https://id.example.com", ClientID: "agentdesk"}})
	t.Cleanup(func() {
		svc.Close()
		st.Close()
	})
	err := st.Write(ctx, store.Author{}, func(tx *store.Tx) error {
		for i := range service.MaxPendingLogins - 1 {
			if err := tx.InsertLogin(ctx, fmt.Sprintf("state-%d", i), "n", "v", now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if err := svc.BeginLogin(ctx, "", "last", "n", "v"); err != nil {
		t.Fatalf("login %d: %v", service.MaxPendingLogins, err)
	}
	err = svc.BeginLogin(ctx, "", "one-too-many", "n", "v")
	if secs, ok := errs.RetryAfterSeconds(err); !ok || secs != int((service.LoginMaxAge-time.Minute)/time.Second) ||
		!strings.Contains(err.Error(), "sign-ins are under way") {
		t.Fatalf("login %d: %v (Retry-After %d), want rate_limited until the oldest expires", service.MaxPendingLogins+1, err, secs)
	}
	now = now.Add(service.LoginMaxAge - time.Minute + time.Second)
	if err := svc.BeginLogin(ctx, "", "after", "n", "v"); err != nil {
		t.Fatalf("once the oldest logins expired: %v", err)
	}
}

// TestEndSessionGivesIDToken: signing out gives back the provider's ID token of the
// session, for id_token_hint, and forgets it: an ended session keeps none.
func TestEndSessionGivesIDToken(t *testing.T) { pgtest.Engines(t, testEndSessionGivesIDToken) }

func testEndSessionGivesIDToken(t *testing.T, engine string) {
	ctx := context.Background()
	svc := teamService(t, engine)
	value, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "s1", Email: "lee@corp.example",
		EmailVerified: true, IDToken: "eyJ.the-id-token.sig"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, service.Credentials{Where: service.WhereREST, Session: value, Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"eyJ.the-id-token.sig", ""} {
		if got, err := svc.EndSession(ctx, p); err != nil || got != want {
			t.Fatalf("sign-out %d: %q %v, want %q", i+1, got, err, want)
		}
	}
}
