package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTeamTokensBelongToTheirMaker: the tokens a person makes (signed in, or with a
// token of theirs) record them as createdBy, and end with their rights: a role without
// one of a token's scopes revokes that token, removal revokes them all, at once and
// open sockets included. Tokens of the command line belong to no one and stay.
func TestTeamTokensBelongToTheirMaker(t *testing.T) {
	pgtest.Engines(t, testTeamTokensBelongToTheirMaker)
}

type madeToken struct {
	ID        int64
	Token     string
	RevokedAt *string
	CreatedBy *struct {
		ID          int64
		Name, Email string
	}
}

func testTeamTokensBelongToTheirMaker(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleAdmin)
	cookie := tm.signIn(t, tm.browser(t), "dana")
	status, m := tm.me(t, withCookie(testenv.Request{}, cookie, ""))
	if status != http.StatusOK || m.User == nil {
		t.Fatalf("/api/me: %d %+v", status, m)
	}
	csrf, dana := m.CSRFToken, m.User.ID
	owner := tm.env.Token(t, tm.env.Project.ID, auth.Admin, auth.TaskRead) // the command line's

	// gql runs a query with a Bearer token, or with Dana's cookie when token is "".
	gql := func(token, query string, out any) *testenv.Response {
		t.Helper()
		req := testenv.Request{Method: "POST", Path: "/graphql", Token: token, Body: map[string]string{"query": query}}
		if token == "" {
			req = withCookie(req, cookie, csrf)
		}
		r := tm.env.Do(t, req)
		if out != nil {
			var body struct {
				Data   json.RawMessage
				Errors []struct{ Message string }
			}
			r.JSON(t, &body)
			if r.Status != http.StatusOK || len(body.Errors) > 0 {
				t.Fatalf("%s: %d %s", query, r.Status, r.Body)
			}
			if err := json.Unmarshal(body.Data, out); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	create := func(by, scopes string) madeToken {
		t.Helper()
		var out struct{ CreatePlatformToken madeToken }
		gql(by, `mutation { createPlatformToken(name: "made", scopes: [`+scopes+`]) { id token createdBy { id name email } } }`, &out)
		return out.CreatePlatformToken
	}
	listed := func() map[int64]madeToken {
		t.Helper()
		var out struct{ Tokens []madeToken }
		gql(owner, `{ tokens { id revokedAt createdBy { id name email } } }`, &out)
		byID := map[int64]madeToken{}
		for _, tok := range out.Tokens {
			byID[tok.ID] = tok
		}
		return byID
	}
	works := func(token string) int {
		return tm.env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: token}).Status
	}

	admin := create("", `"admin", "task:read"`)           // by Dana's session
	minted := create(admin.Token, `"admin", "task:read"`) // by her token: hers too
	reader := create("", `"task:read"`)
	for _, tok := range []madeToken{admin, minted, reader} {
		if tok.CreatedBy == nil || tok.CreatedBy.ID != dana || tok.CreatedBy.Email != "dana@example.com" || tok.CreatedBy.Name != "Dana Test" {
			t.Fatalf("token %d: createdBy %+v, want Dana (%d)", tok.ID, tok.CreatedBy, dana)
		}
	}
	list := listed()
	if c := list[admin.ID].CreatedBy; c == nil || c.ID != dana {
		t.Fatalf("the tokens list shows %+v as the maker of Dana's token", c)
	}
	if len(list) != 4 {
		t.Fatalf("tokens listed: %+v", list)
	}
	for id, tok := range list {
		cli := id != admin.ID && id != minted.ID && id != reader.ID
		if cli != (tok.CreatedBy == nil) {
			t.Errorf("token %d (the command line's: %v) is listed as made by %+v", id, cli, tok.CreatedBy)
		}
	}

	// Made a member, Dana no longer holds admin: her admin tokens end, sockets included;
	// her task:read token is within the role and stays.
	adminStream, mintedStream := dial(t, tm.env, "", bearer(admin.Token)), dial(t, tm.env, "", bearer(minted.Token))
	gql(owner, fmt.Sprintf(`mutation { setMemberRole(userId: %d, role: member) { role } }`, dana), &struct{}{})
	expectClose(t, adminStream, "revoked")
	expectClose(t, mintedStream, "revoked")
	for _, tok := range []madeToken{admin, minted} {
		if s := works(tok.Token); s != http.StatusUnauthorized {
			t.Errorf("token %d beyond its maker's role: %d, want 401", tok.ID, s)
		}
	}
	if s := works(reader.Token); s != http.StatusOK {
		t.Fatalf("a task:read token of a member: %d, want 200", s)
	}
	list = listed()
	if list[admin.ID].RevokedAt == nil || list[minted.ID].RevokedAt == nil || list[reader.ID].RevokedAt != nil {
		t.Fatalf("after the demotion: %+v", list)
	}

	// Admin again, then removed: what the issue saw. Her admin token neither makes
	// tokens nor lists members any more; every token she made is revoked.
	gql(owner, fmt.Sprintf(`mutation { setMemberRole(userId: %d, role: admin) { role } }`, dana), &struct{}{})
	again := create("", `"admin", "task:read"`)
	stream := dial(t, tm.env, "", bearer(again.Token))
	gql(owner, fmt.Sprintf(`mutation { removeMember(userId: %d) }`, dana), &struct{}{})
	expectClose(t, stream, "revoked")
	for _, q := range []string{`mutation { createPlatformToken(name: "x", scopes: ["admin"]) { token } }`, `{ members { userId } }`} {
		if r := gql(again.Token, q, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("a removed admin's token: %s answered %d %s, want 401", q, r.Status, r.Body)
		}
	}
	if s := works(reader.Token); s != http.StatusUnauthorized {
		t.Errorf("a removed member's task:read token: %d, want 401", s)
	}
	// The command line's token belongs to no one and is untouched.
	if s := works(owner); s != http.StatusOK {
		t.Fatalf("the command line's token: %d, want 200", s)
	}
	if c := listed()[again.ID]; c.RevokedAt == nil || c.CreatedBy == nil || c.CreatedBy.ID != dana {
		t.Fatalf("after the removal, the list shows %+v", c)
	}
}
