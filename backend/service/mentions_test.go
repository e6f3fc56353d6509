package service_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// mentioned is a mention as the tests compare it: who, and the text that named them.
type mentioned struct {
	Kind, Name, Text string
	ID               int64
}

func mentionsOf(m *model.Message) []mentioned {
	out := []mentioned{}
	for _, mn := range m.Mentions {
		id := mn.UserID
		if mn.Kind == model.ActorAgent {
			id = mn.AgentID
		}
		out = append(out, mentioned{mn.Kind, mn.Name, mn.Text, *id})
	}
	return out
}

func sameMentions(a, b []mentioned) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMentions: "@" and a name of the project's members or agents mentions them, by the
// rules of service/mentions.go; anything else stays text, and another project's agent
// of the same name is never the one mentioned. The mentions are kept with the message
// (lists, the event) and each one mentioned finds the message in their list.
func TestMentions(t *testing.T) { pgtest.Engines(t, testMentions) }

func testMentions(t *testing.T, engine string) {
	// The conversations' world, on a database with the local owner (a member of every
	// project it makes).
	svc := newService(t, engine)
	ctx := context.Background()
	w := worldOf(t, svc)
	owner := auth.Owner(w.project)
	worker, err := w.svc.CreateAgent(ctx, owner, "worker")
	if err != nil {
		t.Fatal(err)
	}
	otherProject := w.outsider.ProjectID
	if _, err := w.svc.CreateAgent(ctx, auth.Owner(otherProject), "twin"); err != nil {
		t.Fatal(err)
	}
	twin, err := w.svc.CreateAgent(ctx, owner, "twin") // the same name in both projects
	if err != nil {
		t.Fatal(err)
	}
	ann, err := w.svc.AddMember(ctx, owner, service.AddMemberInput{Name: "Ann Lee", Email: "ann.lee@example.com", Role: model.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := w.svc.AddMember(ctx, owner, service.AddMemberInput{Name: "Bob", Role: model.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	// A person named like an agent: "@helper" names both.
	namesake, err := w.svc.AddMember(ctx, owner, service.AddMemberInput{Name: "helper", Role: model.RoleMember})
	if err != nil {
		t.Fatal(err)
	}

	text := "@worker please ask @ann lee, then @BOB. cc @ann.lee (the same Ann) and @helper; " +
		"not @nobody, @stranger, @workers, mail ann.lee@example.com, a@@worker; @twin"
	conv, err := w.svc.CreateConversation(ctx, w.user, service.CreateConversationInput{Message: ptr("plans")}, "")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := w.svc.PostMessage(ctx, w.user, conv.UUID, service.PostMessageInput{Message: &text}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []mentioned{
		{model.ActorAgent, "worker", "@worker", worker.ID},
		{model.ActorUser, "Ann Lee", "@ann lee", ann.UserID},
		{model.ActorUser, "Bob", "@BOB", bob.UserID},
		{model.ActorUser, "helper", "@helper", namesake.UserID},
		{model.ActorAgent, "helper", "@helper", w.agentID},
		{model.ActorAgent, "twin", "@twin", twin.ID},
	}
	if got := mentionsOf(msg); !sameMentions(got, want) {
		t.Fatalf("mentions of the posted message:\n got %+v\nwant %+v", got, want)
	}
	msgs, _, err := w.svc.ListMessages(ctx, w.reader, conv.UUID, service.PageInput{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mentionsOf(&msgs[1]); !sameMentions(got, want) {
		t.Fatalf("mentions of the listed message:\n got %+v\nwant %+v", got, want)
	}
	if msgs[0].Mentions == nil || len(msgs[0].Mentions) != 0 {
		t.Fatalf("a message without mentions has %#v, want an empty list", msgs[0].Mentions)
	}

	// The message.created event carries them, for agents on the stream.
	events, err := w.st.Read().EventsSince(ctx, w.project, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	data, err := json.Marshal(last.Data)
	if err != nil {
		t.Fatal(err)
	}
	var ev model.Message
	if err := json.Unmarshal(data, &ev); err != nil || last.Type != service.EventMessageCreated {
		t.Fatalf("last event %s %s (%v), want message.created", last.Type, data, err)
	}
	if got := mentionsOf(&ev); !sameMentions(got, want) {
		t.Fatalf("mentions in the event:\n got %+v\nwant %+v", got, want)
	}

	// Each one mentioned finds the message; others do not.
	twinPrincipal := auth.Agent(w.project, twin.ID, "twin")
	annToken := &auth.Principal{Kind: auth.KindToken, ProjectID: w.project, Name: "ann's token", TokenMaker: ann.UserID, Scopes: []string{auth.MessagingRead}}
	for _, tc := range []struct {
		who  string
		p    *auth.Principal
		want int
	}{
		{"the agent worker", auth.Agent(w.project, worker.ID, "worker"), 1},
		{"the agent twin", twinPrincipal, 1},
		{"Ann, through a token she made", annToken, 1},
		{"the local owner, not mentioned", owner, 0},
		{"the other project's user", w.outsider, 0},
	} {
		got, more, err := w.svc.Mentions(ctx, tc.p, service.MentionsInput{Limit: service.DefaultMentionsLimit})
		if err != nil {
			t.Fatalf("%s: %v", tc.who, err)
		}
		if len(got) != tc.want || more || tc.want == 1 && got[0].ID != msg.ID {
			t.Fatalf("%s: mentions %+v (more %v), want %d", tc.who, got, more, tc.want)
		}
	}

	// A token nobody made (the CLI's) is the local owner's: it sees "@<owner's name>".
	members, err := w.svc.Members(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	var ownerName string
	for _, m := range members {
		if m.LocalOwner {
			ownerName = m.Name
		}
	}
	if ownerName == "" {
		t.Fatalf("no local owner among the members %+v", members)
	}
	second, err := w.svc.PostMessage(ctx, auth.Agent(w.project, worker.ID, "worker"), conv.UUID,
		service.PostMessageInput{Message: ptr("done, @" + ownerName + " and @worker")}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*auth.Principal{owner, w.user} {
		got, _, err := w.svc.Mentions(ctx, p, service.MentionsInput{Limit: 1})
		if err != nil || len(got) != 1 || got[0].ID != second.ID {
			t.Fatalf("%s's mentions: %+v, %v; want the message %d", p.Name, got, err, second.ID)
		}
	}
	// Newest first, paged with BeforeID.
	agentWorker := auth.Agent(w.project, worker.ID, "worker")
	page, more, err := w.svc.Mentions(ctx, agentWorker, service.MentionsInput{Limit: 1})
	if err != nil || len(page) != 1 || page[0].ID != second.ID || !more {
		t.Fatalf("first page %+v (more %v, %v), want message %d and more", page, more, err, second.ID)
	}
	page, more, err = w.svc.Mentions(ctx, agentWorker, service.MentionsInput{Limit: 1, BeforeID: second.ID})
	if err != nil || len(page) != 1 || page[0].ID != msg.ID || more {
		t.Fatalf("second page %+v (more %v, %v), want message %d and no more", page, more, err, msg.ID)
	}
	for _, in := range []service.MentionsInput{{Limit: 0}, {Limit: service.MaxListLimit + 1}, {Limit: 1, BeforeID: -1}} {
		if _, _, err := w.svc.Mentions(ctx, agentWorker, in); err == nil {
			t.Fatalf("Mentions(%+v) passed; want invalid_argument", in)
		} else {
			wantCode(t, err, "invalid_argument")
		}
	}
}
