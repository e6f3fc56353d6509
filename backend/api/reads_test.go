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

// TestReadMarkersREST: a read marker is a person's: Dana's session and her two tokens
// (two devices) share one, Eve and a token nobody made have their own; a person's own
// messages are never unread to them; the marker never moves back; bad input is a 400,
// an agent's a 403; another project's conversations never appear. Both engines.
func TestReadMarkersREST(t *testing.T) { pgtest.Engines(t, testReadMarkersREST) }

func testReadMarkersREST(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	env, project := tm.env, tm.env.Project.ID
	tm.invite(t, "dana@example.com", model.RoleAdmin)
	tm.invite(t, "eve@elsewhere.org", model.RoleMember)
	dana := tm.signIn(t, tm.browser(t), "dana")
	eve := tm.signIn(t, tm.browser(t), "eve")
	csrf := map[string]string{dana: tm.csrf(t, dana), eve: tm.csrf(t, eve)}
	// as is a request by a session cookie, or else by a Bearer token.
	as := func(cookie, token string, r testenv.Request) *testenv.Response {
		t.Helper()
		r.Token = token
		if cookie != "" {
			r = withCookie(r, cookie, csrf[cookie])
		}
		return env.Do(t, r)
	}
	var made struct{ CreatePlatformToken struct{ Token string } }
	danaToken := func() string {
		t.Helper()
		r := as(dana, "", testenv.Request{Method: "POST", Path: "/graphql", Body: map[string]string{
			"query": `mutation { createPlatformToken(name: "device", scopes: ["messaging:read", "messaging:write"]) { token } }`}})
		var body struct{ Data json.RawMessage }
		r.JSON(t, &body)
		if err := json.Unmarshal(body.Data, &made); err != nil || made.CreatePlatformToken.Token == "" {
			t.Fatalf("create Dana's token: %d %s", r.Status, r.Body)
		}
		return made.CreatePlatformToken.Token
	}
	laptop, phone := danaToken(), danaToken()
	nobodys := env.Token(t, project, auth.MessagingRead, auth.MessagingWrite)

	convs := "/api/projects/" + project + "/conversations"
	post := func(cookie, token, path, body string) int64 {
		t.Helper()
		r := as(cookie, token, testenv.Request{Method: "POST", Path: path, Body: body})
		var out struct{ ID int64 }
		r.JSON(t, &out)
		if r.Status != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
		return out.ID
	}
	conv := post("", laptop, convs, `{"message":"one"}`) // Dana's: read by her
	msgs := convs + fmt.Sprint("/", conv, "/messages")
	var listed []model.Message
	as("", nobodys, testenv.Request{Method: "GET", Path: msgs}).JSON(t, &listed)
	first := listed[0].ID
	second := post(eve, "", msgs, `{"message":"two"}`)
	third := post("", nobodys, msgs, `{"message":"three"}`)

	state := func(cookie, token string) (lastRead, unread *int64) {
		t.Helper()
		r := as(cookie, token, testenv.Request{Method: "GET", Path: convs})
		var page []model.Conversation
		r.JSON(t, &page)
		if r.Status != http.StatusOK || len(page) != 1 || page[0].ID != conv {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		return page[0].LastReadMessageID, page[0].Unread
	}
	check := func(who, cookie, token string, wantLast, wantUnread int64) {
		t.Helper()
		last, unread := state(cookie, token)
		if last == nil || unread == nil {
			t.Fatalf("%s: no lastReadMessageId (%v) or unread (%v)", who, last, unread)
		}
		if *last != wantLast || *unread != wantUnread {
			t.Fatalf("%s: lastReadMessageId %d unread %d, want %d and %d", who, *last, *unread, wantLast, wantUnread)
		}
	}
	for _, device := range []struct{ name, cookie, token string }{{"Dana's session", dana, ""}, {"Dana's laptop", "", laptop}, {"Dana's phone", "", phone}} {
		check(device.name, device.cookie, device.token, first, 2)
	}
	check("Eve", eve, "", second, 1)
	check("a token nobody made", "", nobodys, third, 0)

	markRead := func(cookie, token string, body string) *testenv.Response {
		return as(cookie, token, testenv.Request{Method: "PUT", Path: convs + fmt.Sprint("/", conv, "/read"), Body: body})
	}
	if r := markRead("", phone, fmt.Sprintf(`{"lastReadMessageId":%d}`, third)); r.Status != http.StatusNoContent {
		t.Fatalf("mark read: %d %s", r.Status, r.Body)
	}
	check("Dana's laptop after her phone read it all", "", laptop, third, 0)
	check("Dana's session after her phone read it all", dana, "", third, 0)
	check("Eve after Dana read it", eve, "", second, 1)
	if r := markRead("", laptop, fmt.Sprintf(`{"lastReadMessageId":%d}`, first)); r.Status != http.StatusNoContent {
		t.Fatalf("mark read back: %d %s", r.Status, r.Body)
	}
	check("Dana after an older mark", "", laptop, third, 0)

	other := env.NewProject(t, "other")
	otherTok := env.Token(t, other.ID, auth.MessagingRead, auth.MessagingWrite)
	otherConv := post("", otherTok, "/api/projects/"+other.ID+"/conversations", `{"message":"secret"}`)
	check("Dana, with another project's conversation there", "", laptop, third, 0)
	secondConv := post("", nobodys, convs, `{"message":"elsewhere"}`)
	var page []model.Conversation
	as("", laptop, testenv.Request{Method: "GET", Path: convs}).JSON(t, &page)
	if len(page) != 2 || page[1].ID != secondConv || *page[1].Unread != 1 || *page[1].LastReadMessageID != 0 {
		t.Fatalf("a new conversation, unread: %+v", page)
	}

	var otherMsgs []model.Message
	as("", otherTok, testenv.Request{Method: "GET", Path: "/api/projects/" + other.ID + "/conversations" + fmt.Sprint("/", otherConv, "/messages")}).JSON(t, &otherMsgs)
	for _, bad := range []struct{ body, why string }{
		{fmt.Sprintf(`{"lastReadMessageId":%d}`, otherMsgs[0].ID), "another project's message"},
		{fmt.Sprintf(`{"lastReadMessageId":%d}`, secondConv+1000), "no such message"},
		{`{"lastReadMessageId":0}`, "zero"},
		{`{"lastReadMessageId":"x"}`, "a string"},
		{`{}`, "nothing"},
		{`{"lastRead":3}`, "no lastReadMessageId, only an unknown field"},
	} {
		if r := markRead("", laptop, bad.body); r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", bad.why, r.Status, r.Body)
		}
	}
	var secondMsgs []model.Message
	as("", laptop, testenv.Request{Method: "GET", Path: convs + fmt.Sprint("/", secondConv, "/messages")}).JSON(t, &secondMsgs)
	if r := markRead("", laptop, fmt.Sprintf(`{"lastReadMessageId":%d}`, secondMsgs[0].ID)); r.Status != http.StatusBadRequest {
		t.Errorf("a message of another conversation: %d %s, want 400", r.Status, r.Body)
	}
	if r := as("", otherTok, testenv.Request{Method: "PUT", Path: "/api/projects/" + other.ID + "/conversations" + fmt.Sprint("/", conv, "/read"),
		Body: fmt.Sprintf(`{"lastReadMessageId":%d}`, third)}); r.Status != http.StatusNotFound {
		t.Errorf("another project's conversation: %d %s, want 404", r.Status, r.Body)
	}
	writeOnly := env.Token(t, project, auth.MessagingWrite)
	if r := markRead("", writeOnly, fmt.Sprintf(`{"lastReadMessageId":%d}`, third)); r.Status != http.StatusForbidden {
		t.Errorf("without messaging:read: %d %s, want 403", r.Status, r.Body)
	}

	env.Agent(t, project, "worker")
	agent := testenv.Request{Method: "GET", Path: convs, Header: env.AgentHeaders(t, project, "worker")}
	var agentPage []model.Conversation
	env.Do(t, agent).JSON(t, &agentPage)
	if len(agentPage) != 2 || agentPage[0].Unread != nil || agentPage[0].LastReadMessageID != nil {
		t.Fatalf("an agent's list: %+v", agentPage)
	}
	agent.Method, agent.Path, agent.Body = "PUT", convs+fmt.Sprint("/", conv, "/read"), fmt.Sprintf(`{"lastReadMessageId":%d}`, third)
	if r := env.Do(t, agent); r.Status != http.StatusForbidden {
		t.Errorf("an agent's marker: %d %s, want 403", r.Status, r.Body)
	}
}
