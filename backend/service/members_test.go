package service_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func TestMembersOwnerRules(t *testing.T) { pgtest.Engines(t, testMembersOwnerRules) }

func testMembersOwnerRules(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	projects, _ := svc.Projects(ctx, auth.Owner(""))
	pid := projects[0].ID
	owner := auth.Owner(pid)
	admin := &auth.Principal{Kind: auth.KindToken, ProjectID: pid, Name: "admin", Scopes: service.RoleScopes(model.RoleAdmin)}

	// The local owner owns the first project, and every project made later.
	ms, err := svc.Members(ctx, owner)
	if err != nil || len(ms) != 1 || !ms[0].LocalOwner || ms[0].Role != model.RoleOwner {
		t.Fatalf("members = %+v %v", ms, err)
	}
	localID := ms[0].UserID
	later, err := svc.CreateProject(ctx, auth.Owner(""), "Later", "")
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := svc.Members(ctx, auth.Owner(later.ID)); len(ms) != 1 || ms[0].UserID != localID || ms[0].Role != model.RoleOwner {
		t.Fatalf("members of a new project = %+v", ms)
	}

	// The last owner can be neither demoted nor removed, by anyone.
	for _, p := range []*auth.Principal{owner, admin} {
		if _, err := svc.SetMemberRole(ctx, p, localID, model.RoleAdmin); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("demote the last owner: %v", err)
		}
		if err := svc.RemoveMember(ctx, p, localID); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("remove the last owner: %v", err)
		}
	}

	// Only an owner makes owners; with two, an owner may step down, an admin may not touch them.
	ann, err := svc.AddMember(ctx, admin, service.AddMemberInput{Email: "Ann@Example.com", Role: model.RoleAdmin})
	if err != nil || ann.Name != "ann" || ann.Email == nil || *ann.Email != "ann@example.com" {
		t.Fatalf("add ann = %+v %v", ann, err)
	}
	if _, err := svc.SetMemberRole(ctx, admin, ann.UserID, model.RoleOwner); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("admin makes an owner: %v", err)
	}
	if _, err := svc.AddMember(ctx, admin, service.AddMemberInput{Name: "bob", Role: model.RoleOwner}); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("admin adds an owner: %v", err)
	}
	if m, err := svc.SetMemberRole(ctx, owner, ann.UserID, model.RoleOwner); err != nil || m.Role != model.RoleOwner {
		t.Fatalf("owner makes ann owner: %+v %v", m, err)
	}
	if _, err := svc.SetMemberRole(ctx, admin, ann.UserID, model.RoleMember); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("admin demotes an owner: %v", err)
	}
	if err := svc.RemoveMember(ctx, admin, localID); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("admin removes an owner: %v", err)
	}
	if m, err := svc.SetMemberRole(ctx, owner, localID, model.RoleAdmin); err != nil || m.Role != model.RoleAdmin {
		t.Fatalf("the local owner steps down: %+v %v", m, err)
	}
	// Now ann is the last owner.
	if err := svc.RemoveMember(ctx, owner, ann.UserID); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("remove the new last owner: %v", err)
	}

	// The same user can be added to another project by email: it is reused.
	again, err := svc.AddMember(ctx, auth.Owner(later.ID), service.AddMemberInput{Email: "ann@example.com", Role: model.RoleViewer})
	if err != nil || again.UserID != ann.UserID {
		t.Fatalf("ann in another project = %+v %v", again, err)
	}

	// Roles bound scopes.
	want := map[string][]string{
		model.RoleViewer: {auth.TaskRead, auth.MessagingRead},
		model.RoleMember: {auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite},
		model.RoleAdmin:  {auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite, auth.Admin},
		model.RoleOwner:  {auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite, auth.Admin},
	}
	for role, scopes := range want {
		got := service.RoleScopes(role)
		slices.Sort(got)
		slices.Sort(scopes)
		if !slices.Equal(got, scopes) {
			t.Errorf("RoleScopes(%s) = %v, want %v", role, got, scopes)
		}
	}
	if service.RoleScopes("root") != nil {
		t.Error("unknown role has scopes")
	}
}

// addMember by name matches only among the caller's project's members: a user that only
// another project knows is neither found (with that project's email) nor counted.
func TestAddMemberByNameStaysInProject(t *testing.T) {
	pgtest.Engines(t, testAddMemberByNameStaysInProject)
}

func testAddMemberByNameStaysInProject(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine) // the local owner, a member of every project
	a, b := projectsAB(t, svc)
	adminOf := func(pid string) *auth.Principal {
		return &auth.Principal{Kind: auth.KindToken, ProjectID: pid, Name: "admin", Scopes: service.RoleScopes(model.RoleAdmin)}
	}
	adminA, adminB := adminOf(a.ID), adminOf(b.ID)

	// Project B knows one Carol and two Daves, all with emails.
	carolB, err := svc.AddMember(ctx, adminB, service.AddMemberInput{Email: "carol@b.example", Name: "Carol", Role: model.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"dave1@b.example", "dave2@b.example"} {
		if _, err := svc.AddMember(ctx, adminB, service.AddMemberInput{Email: e, Name: "Dave", Role: model.RoleMember}); err != nil {
			t.Fatal(err)
		}
	}

	// In A, the same names make new users: no email from B, no count of B's users.
	for _, name := range []string{"Carol", "Dave"} {
		m, err := svc.AddMember(ctx, adminA, service.AddMemberInput{Name: name, Role: model.RoleViewer})
		if err != nil {
			t.Fatalf("add %s to A: %v", name, err)
		}
		if m.Email != nil || m.UserID == carolB.UserID || m.Name != name || m.ProjectID != a.ID {
			t.Fatalf("add %s to A = %+v (B's Carol is user %d)", name, m, carolB.UserID)
		}
	}
	// A name already among A's members is a conflict that says nothing about B.
	_, err = svc.AddMember(ctx, adminA, service.AddMemberInput{Name: "Dave", Role: model.RoleViewer})
	if errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "already a member") || strings.ContainsAny(err.Error(), "0123456789@") {
		t.Fatalf("add Dave to A again: %v", err)
	}
	// B's members are as they were.
	if ms, err := svc.Members(ctx, adminB); err != nil || len(ms) != 4 {
		t.Fatalf("B's members = %+v %v", ms, err)
	}
}

// TestAddMemberByEmailShowsNoOtherProjectsName: adding by email a person another
// project added under a name of its own answers, lists and announces them under the
// name given here (or the email's local part), never the other project's. Once the
// person signs in, every project shows their own name from the provider.
func TestAddMemberByEmailShowsNoOtherProjectsName(t *testing.T) {
	pgtest.Engines(t, testAddMemberByEmailShowsNoOtherProjectsName)
}

func testAddMemberByEmailShowsNoOtherProjectsName(t *testing.T, engine string) {
	ctx := context.Background()
	svc := teamService(t, engine)
	a, b := projectsAB(t, svc)
	const secret = "Carol (acquisition target)"
	if _, err := svc.AddMember(ctx, auth.Owner(a.ID), service.AddMemberInput{Email: "carol@x.example", Name: secret, Role: model.RoleMember}); err != nil {
		t.Fatal(err)
	}
	names := func(pid string) []string {
		t.Helper()
		ms, err := svc.Members(ctx, auth.Owner(pid))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			if !m.LocalOwner {
				out = append(out, m.Name)
			}
		}
		return out
	}
	m, err := svc.AddMember(ctx, auth.Owner(b.ID), service.AddMemberInput{Email: "carol@x.example", Role: model.RoleViewer})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "carol" || slices.Contains(names(b.ID), secret) {
		t.Fatalf("B added carol@x.example as %q and lists %v: A's name shown to B", m.Name, names(b.ID))
	}
	if got := names(a.ID); !slices.Equal(got, []string{secret}) {
		t.Fatalf("A's members = %v, want A's own name %q", got, secret)
	}
	if _, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "carol", Email: "carol@x.example",
		EmailVerified: true, Name: "Carol Jones"}); err != nil {
		t.Fatal(err)
	}
	if ga, gb := names(a.ID), names(b.ID); !slices.Equal(ga, []string{"Carol Jones"}) || !slices.Equal(gb, []string{"Carol Jones"}) {
		t.Fatalf("after Carol signed in: A lists %v, B %v; want her own name in both", ga, gb)
	}
}

// TestMembershipsKeepJoinOrder: memberships made at the same moment list in the order
// they were made, on both engines: a user's (the first is a session's default project)
// and a project's. A role change since moves nothing (PostgreSQL, which has no rowid,
// once put the updated row last), and the order is not the ids' order.
func TestMembershipsKeepJoinOrder(t *testing.T) { pgtest.Engines(t, testMembershipsKeepJoinOrder) }

func testMembershipsKeepJoinOrder(t *testing.T, engine string) {
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) // every membership has this created_at
	st := testenv.OpenStore(t, engine, store.Options{Synchronous: "NORMAL"})
	svc := service.New(st, service.Options{Now: func() time.Time { return at },
		OIDC: auth.OIDC{PublicURL: "https://agentdesk.example.com", Issuer: "https://id.example.com", ClientID: "agentdesk"}})
	t.Cleanup(func() {
		svc.Close()
		st.Close()
	})
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := projectsAB(t, svc)
	if a.ID < b.ID { // dana joins the project with the higher id first
		a, b = b, a
	}
	add := func(p *model.Project, email, role string) int64 {
		t.Helper()
		m, err := svc.AddMember(ctx, auth.Owner(p.ID), service.AddMemberInput{Email: email, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		return m.UserID
	}
	erin := add(b, "erin@example.com", model.RoleMember) // a lower user id than dana's
	dana := add(a, "dana@example.com", model.RoleViewer)
	add(b, "dana@example.com", model.RoleViewer)
	add(a, "erin@example.com", model.RoleMember)
	if _, err := svc.SetMemberRole(ctx, auth.Owner(a.ID), dana, model.RoleAdmin); err != nil {
		t.Fatal(err)
	}

	value, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "dana-1", Email: "dana@example.com", EmailVerified: true, Name: "Dana"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, service.Credentials{Where: service.WhereREST, Session: value, Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	if p.ProjectID != a.ID || p.Role != model.RoleAdmin {
		t.Errorf("default project: %s as %s, want %s (joined first) as admin", p.ProjectID, p.Role, a.ID)
	}
	me, err := svc.Me(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range me.Memberships {
		got = append(got, m.ProjectID+" "+m.Role)
	}
	if want := []string{a.ID + " admin", b.ID + " viewer"}; !slices.Equal(got, want) {
		t.Errorf("dana's memberships: %q, want %q (the order she joined)", got, want)
	}

	ms, err := svc.Members(ctx, auth.Owner(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range ms {
		ids = append(ids, m.UserID)
	}
	if want := []int64{ms[0].UserID, dana, erin}; !ms[0].LocalOwner || !slices.Equal(ids, want) {
		t.Errorf("members of A: %v, want %v (the owner, then the order they joined)", ids, want)
	}
}

// projectsAB makes projects A and B as the local owner.
func projectsAB(t *testing.T, svc *service.Service) (a, b *model.Project) {
	t.Helper()
	var err error
	if a, err = svc.CreateProject(context.Background(), auth.Owner(""), "A", ""); err != nil {
		t.Fatal(err)
	}
	if b, err = svc.CreateProject(context.Background(), auth.Owner(""), "B", ""); err != nil {
		t.Fatal(err)
	}
	return a, b
}
