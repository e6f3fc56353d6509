package service_test

import (
	"context"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// authWorld is a service on a real database with one project, an agent, and tokens of
// every kind; its clock moves only when the test says.
type authWorld struct {
	svc                               *service.Service
	project                           string
	platform, data, revoked, expiring string
	digest                            string // the project's X-Task-Authorization
	now                               *atomic.Int64
	owner                             *auth.Principal
}

func newAuthWorld(t *testing.T, engine string) *authWorld {
	t.Helper()
	ctx := context.Background()
	st := testenv.OpenStore(t, engine, store.Options{Synchronous: "NORMAL"})
	w := &authWorld{now: &atomic.Int64{}}
	w.now.Store(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	w.svc = service.New(st, service.Options{Now: func() time.Time { return time.Unix(0, w.now.Load()) }})
	t.Cleanup(func() {
		w.svc.Close()
		st.Close()
	})
	pr, err := w.svc.CreateProject(ctx, auth.Owner(""), "auth", "")
	if err != nil {
		t.Fatal(err)
	}
	w.project, w.owner = pr.ID, auth.Owner(pr.ID)
	if _, err := w.svc.CreateAgent(ctx, w.owner, "builder"); err != nil {
		t.Fatal(err)
	}
	env, err := w.svc.AgentEnv(ctx, w.owner, "builder", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range env {
		if e.Name == "SERVICE_API_TOKEN" {
			w.digest = e.Value
		}
	}
	token := func(typ string, expires *time.Time, scopes ...string) string {
		v, _, err := w.svc.CreateToken(ctx, w.owner, service.CreateTokenInput{Name: typ + " token", Type: typ, Scopes: scopes, ExpiresAt: expires})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	w.platform = token(model.TokenPlatform, nil, auth.TaskRead)
	w.data = token(model.TokenData, nil, auth.VectorRead)
	w.revoked = token(model.TokenPlatform, nil, auth.TaskRead)
	in := w.clock().Add(time.Hour)
	w.expiring = token(model.TokenPlatform, &in, auth.TaskRead)
	p, err := w.svc.AuthenticateToken(ctx, w.revoked)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.svc.RevokeToken(ctx, w.owner, p.TokenID); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *authWorld) clock() time.Time { return time.Unix(0, w.now.Load()).UTC() }

// check authenticates c and compares the outcome: code "" for success, else the error
// code and a piece of its message.
func (w *authWorld) check(t *testing.T, name string, c service.Credentials, code errs.Code, says string) *auth.Principal {
	t.Helper()
	p, err := w.svc.Authenticate(context.Background(), c)
	if code == "" {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return p
	}
	_, msg := errs.Public(err)
	if errs.CodeOf(err) != code || !strings.Contains(msg, says) {
		t.Errorf("%s: got %q %q, want %q containing %q", name, errs.CodeOf(err), msg, code, says)
	}
	return nil
}

// TestAuthenticateEveryCredential: each kind of credential, at each place, by the one
// function every interface calls.
func TestAuthenticateEveryCredential(t *testing.T) {
	pgtest.Engines(t, testAuthenticateEveryCredential)
}

func testAuthenticateEveryCredential(t *testing.T, engine string) {
	w := newAuthWorld(t, engine)
	bearer := func(v string) string { return "Bearer " + v }
	all := []service.Where{service.WhereREST, service.WhereVector, service.WhereGraphQL, service.WhereEvents, service.WhereCallback}

	// A platform token, in the header or as a bare value.
	for _, c := range []service.Credentials{
		{Where: service.WhereREST, Authorization: bearer(w.platform)},
		{Where: service.WhereREST, Authorization: "bearer  " + w.platform + " "},
		{Where: service.WhereGraphQL, Token: w.platform},
		{Where: service.WhereEvents, Token: w.platform},
	} {
		p := w.check(t, "platform token at "+string(c.Where), c, "", "")
		if p != nil && (p.Kind != auth.KindToken || p.ProjectID != w.project || p.Name != "platform token" || !p.Has(auth.TaskRead) || p.TokenType != model.TokenPlatform) {
			t.Errorf("platform token principal %+v", p)
		}
	}
	// The header wins over a token given elsewhere, and over agent headers.
	w.check(t, "header first", service.Credentials{Where: service.WhereEvents, Authorization: bearer("adk_" + strings.Repeat("x", 40)), Token: w.platform},
		errs.Unauthenticated, "unknown token")
	w.check(t, "header before agent", service.Credentials{Where: service.WhereREST, Authorization: bearer(w.platform), AgentDigest: "nope", ProjectID: w.project}, "", "")

	// Malformed, unknown, revoked and expired tokens.
	w.check(t, "not bearer", service.Credentials{Where: service.WhereREST, Authorization: "Basic abc"}, errs.Unauthenticated, `must be "Bearer <token>"`)
	w.check(t, "bearer without token", service.Credentials{Where: service.WhereREST, Authorization: "Bearer "}, errs.Unauthenticated, `must be "Bearer <token>"`)
	w.check(t, "junk", service.Credentials{Where: service.WhereREST, Authorization: bearer("hello")}, errs.Unauthenticated, "not an agentdesk token")
	w.check(t, "unknown", service.Credentials{Where: service.WhereGraphQL, Token: "adk_" + strings.Repeat("y", 40)}, errs.Unauthenticated, "unknown token")
	// A value with the prefix but not the form (mistyped, cut short) is unknown too: it
	// is not told that tokens start with adk_, which it does.
	w.check(t, "malformed", service.Credentials{Where: service.WhereREST, Authorization: bearer("adk_wrongwrongwrong")}, errs.Unauthenticated, "unknown token")
	w.check(t, "revoked", service.Credentials{Where: service.WhereREST, Authorization: bearer(w.revoked)}, errs.Unauthenticated, "revoked")
	w.check(t, "before expiry", service.Credentials{Where: service.WhereREST, Authorization: bearer(w.expiring)}, "", "")
	w.now.Add(int64(2 * time.Hour))
	w.check(t, "expired", service.Credentials{Where: service.WhereREST, Authorization: bearer(w.expiring)}, errs.Unauthenticated, "expired")

	// Nothing at all: each place says what it takes.
	for where, says := range map[service.Where]string{
		service.WhereREST: "Bearer", service.WhereVector: "data token", service.WhereGraphQL: "connection_init",
		service.WhereEvents: "access_token", service.WhereCallback: "X-Task-Authorization",
	} {
		w.check(t, "nothing at "+string(where), service.Credentials{Where: where}, errs.Unauthenticated, says)
	}

	// Agents: right and wrong headers.
	agent := service.Credentials{AgentDigest: w.digest, AgentName: "builder", ProjectID: w.project}
	for _, where := range []service.Where{service.WhereREST, service.WhereEvents, service.WhereCallback} {
		c := agent
		c.Where = where
		p := w.check(t, "agent at "+string(where), c, "", "")
		if p != nil && (p.Kind != auth.KindAgent || p.Name != "builder" || p.AgentID == 0 || p.AgentDigest != w.digest) {
			t.Errorf("agent principal %+v", p)
		}
	}
	upper := agent
	upper.Where, upper.AgentDigest = service.WhereREST, strings.ToUpper(w.digest)
	w.check(t, "agent digest in capitals", upper, "", "")
	for name, tc := range map[string]struct {
		c    service.Credentials
		says string
	}{
		"wrong digest":        {service.Credentials{AgentDigest: strings.Repeat("0", 40), AgentName: "builder", ProjectID: w.project}, "X-Task-Authorization is wrong"},
		"digest of namespace": {service.Credentials{AgentDigest: auth.AgentDigest("default", "x"), AgentName: "builder", ProjectID: w.project}, "X-Task-Authorization is wrong"},
		"unknown project":     {service.Credentials{AgentDigest: w.digest, AgentName: "builder", ProjectID: "prj_nope"}, "X-Task-Authorization is wrong"},
		"no project":          {service.Credentials{AgentDigest: w.digest, AgentName: "builder"}, "needs a project"},
		"no name":             {service.Credentials{AgentDigest: w.digest, ProjectID: w.project}, "missing X-Agent-Name"},
		"unknown agent":       {service.Credentials{AgentDigest: w.digest, AgentName: "ghost", ProjectID: w.project}, `"ghost" is not an agent`},
	} {
		tc.c.Where = service.WhereREST
		w.check(t, name, tc.c, errs.Unauthenticated, tc.says)
	}
	// Agent headers count only where agents may come: elsewhere they are no credential.
	for _, where := range []service.Where{service.WhereVector, service.WhereGraphQL} {
		c := agent
		c.Where = where
		w.check(t, "agent at "+string(where), c, errs.Unauthenticated, "missing credentials")
	}

	// The data-token rule: data tokens on /api/vector only, and only they there.
	for _, where := range all {
		c := service.Credentials{Where: where, Authorization: bearer(w.data)}
		if where == service.WhereVector {
			w.check(t, "data token at vector", c, "", "")
			continue
		}
		w.check(t, "data token at "+string(where), c, errs.Forbidden, "data tokens are accepted only by the /api/vector endpoints")
	}
	w.check(t, "platform token at vector", service.Credentials{Where: service.WhereVector, Authorization: bearer(w.platform)}, errs.Forbidden, "data tokens only")
	// The agent callback is for agents.
	w.check(t, "token at callback", service.Credentials{Where: service.WhereCallback, Authorization: bearer(w.platform)}, errs.Forbidden, "for agents")
	w.check(t, "bad token at callback", service.Credentials{Where: service.WhereCallback, Authorization: bearer(w.revoked)}, errs.Unauthenticated, "revoked")
}

// TestAuthenticateVia: the principal says through which interface it came, for the
// activity trail.
func TestAuthenticateVia(t *testing.T) { pgtest.Engines(t, testAuthenticateVia) }

func testAuthenticateVia(t *testing.T, engine string) {
	w := newAuthWorld(t, engine)
	for _, tc := range []struct {
		where  service.Where
		client string
		via    string
	}{
		{service.WhereREST, "", audit.ViaREST},
		{service.WhereREST, audit.ClientWeb, audit.ViaUI},
		{service.WhereEvents, "", audit.ViaREST},
		{service.WhereGraphQL, "", audit.ViaGraphQL},
		{service.WhereGraphQL, audit.ClientWeb, audit.ViaUI},
		{service.WhereGraphQL, "curl", audit.ViaGraphQL},
	} {
		p := w.check(t, "via", service.Credentials{Where: tc.where, Token: w.platform, Client: tc.client}, "", "")
		if p != nil && p.Via != tc.via {
			t.Errorf("%s with client %q: via %q, want %q", tc.where, tc.client, p.Via, tc.via)
		}
	}
}

// TestCheckCredentialsFollowsAuthenticate: the re-check of open sockets refuses what
// Authenticate would now refuse, and nothing else.
func TestCheckCredentialsFollowsAuthenticate(t *testing.T) {
	pgtest.Engines(t, testCheckCredentialsFollowsAuthenticate)
}

func testCheckCredentialsFollowsAuthenticate(t *testing.T, engine string) {
	ctx := context.Background()
	w := newAuthWorld(t, engine)
	tok := w.check(t, "token", service.Credentials{Where: service.WhereEvents, Token: w.expiring}, "", "")
	ag := w.check(t, "agent", service.Credentials{Where: service.WhereEvents, AgentDigest: w.digest, AgentName: "builder", ProjectID: w.project}, "", "")
	if tok == nil || ag == nil {
		t.FailNow()
	}
	for _, p := range []*auth.Principal{tok, ag, w.owner} {
		if err := w.svc.CheckCredentials(ctx, p); err != nil {
			t.Errorf("%s still holds: %v", p.Name, err)
		}
	}
	w.now.Add(int64(2 * time.Hour))
	if err := w.svc.CheckCredentials(ctx, tok); errs.CodeOf(err) != errs.Unauthenticated || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired token: %v", err)
	}
	// The agent deleted, and another registered under its name: not the same agent.
	if err := w.svc.DeleteAgent(ctx, w.owner, ag.AgentID); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.CheckCredentials(ctx, ag); errs.CodeOf(err) != errs.Unauthenticated {
		t.Errorf("deleted agent: %v", err)
	}
	if _, err := w.svc.CreateAgent(ctx, w.owner, "builder"); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.CheckCredentials(ctx, ag); errs.CodeOf(err) != errs.Unauthenticated || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("replaced agent: %v", err)
	}
	// A rotated secret ends the digest.
	fresh := w.check(t, "new agent", service.Credentials{Where: service.WhereEvents, AgentDigest: w.digest, AgentName: "builder", ProjectID: w.project}, "", "")
	if _, err := w.svc.RotateProjectSecret(ctx, w.owner); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.CheckCredentials(ctx, fresh); errs.CodeOf(err) != errs.Unauthenticated || !strings.Contains(err.Error(), "X-Task-Authorization is wrong") {
		t.Errorf("rotated secret: %v", err)
	}
}

// TestServiceStampsTheActor: the activity trail records the principal a service
// method is given, and the interface it authenticated at, whatever the context says:
// no interface has to put them there.
func TestServiceStampsTheActor(t *testing.T) { pgtest.Engines(t, testServiceStampsTheActor) }

func testServiceStampsTheActor(t *testing.T, engine string) {
	ctx := context.Background()
	w := newAuthWorld(t, engine)
	ci, _, err := w.svc.CreateToken(ctx, w.owner, service.CreateTokenInput{Name: "ci", Scopes: []string{auth.TaskWrite}})
	if err != nil {
		t.Fatal(err)
	}
	create := func(ctx context.Context, p *auth.Principal) {
		t.Helper()
		if _, err := w.svc.CreateTask(ctx, p, service.CreateTaskInput{Summary: "x"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	ui := w.check(t, "web", service.Credentials{Where: service.WhereREST, Authorization: "Bearer " + ci, Client: audit.ClientWeb}, "", "")
	gql := w.check(t, "graphql", service.Credentials{Where: service.WhereGraphQL, Token: ci}, "", "")
	agent := w.check(t, "agent", service.Credentials{Where: service.WhereREST, AgentDigest: w.digest, AgentName: "builder", ProjectID: w.project}, "", "")
	if ui == nil || gql == nil || agent == nil {
		t.FailNow()
	}
	create(ctx, ui)
	create(ctx, gql)
	create(ctx, agent)
	create(ctx, w.owner) // made in code, without an interface: the service's own actor (the system)
	// A service whose own actor is the CLI's (as a command's is) stamps that instead.
	cli := service.New(w.svc.Store(), service.Options{Actor: audit.Actor{Kind: "owner", Name: "owner", Via: audit.ViaCLI}})
	if _, err := cli.CreateTask(ctx, w.owner, service.CreateTaskInput{Summary: "x"}, ""); err != nil {
		t.Fatal(err)
	}
	create(ctx, gql)

	got, err := w.svc.Activity(ctx, w.owner, service.ActivityInput{ObjectType: "task", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]string{ // newest first: kind, name, via
		{"token", "ci", "graphql"},
		{"owner", "owner", "cli"},
		{"system", "system", "internal"},
		{"agent", "builder", "rest"},
		{"token", "ci", "graphql"},
		{"token", "ci", "ui"},
	}
	if len(got) != len(want) {
		t.Fatalf("activity %+v", got)
	}
	for i, a := range got {
		if [3]string{a.ActorKind, a.Actor, a.Via} != want[i] || a.Action != service.EventTaskCreated {
			t.Errorf("activity[%d] = %s %s %s %s, want %v", i, a.ActorKind, a.Actor, a.Via, a.Action, want[i])
		}
	}
}
