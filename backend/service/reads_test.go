package service_test

import (
	"context"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestReadMarkers: who a reader is (a signed-in user and the tokens they made are one
// person; a token nobody made and the local owner are each their own), a poster's own
// messages are read, an agent has no marker, and a page of conversations costs the
// same number of queries whatever its length. Both engines.
func TestReadMarkers(t *testing.T) { pgtest.Engines(t, testReadMarkers) }

func testReadMarkers(t *testing.T, engine string) {
	w := newConvWorld(t, engine)
	ctx := context.Background()
	rw := []string{auth.MessagingRead, auth.MessagingWrite}
	session := &auth.Principal{Kind: auth.KindUser, ProjectID: w.project, Name: "Dana", UserID: 7, Scopes: rw}
	laptop := &auth.Principal{Kind: auth.KindToken, ProjectID: w.project, Name: "laptop", TokenID: 1, TokenMaker: 7, Scopes: rw}
	phone := &auth.Principal{Kind: auth.KindToken, ProjectID: w.project, Name: "phone", TokenID: 2, TokenMaker: 7, Scopes: rw}
	nobodys := &auth.Principal{Kind: auth.KindToken, ProjectID: w.project, Name: "ci", TokenID: 3, Scopes: rw}
	owner := auth.Owner(w.project)

	conv, err := w.svc.CreateConversation(ctx, laptop, service.CreateConversationInput{Message: ptr("one")}, "")
	if err != nil {
		t.Fatal(err)
	}
	post := func(p *auth.Principal, text string) *model.Message {
		t.Helper()
		m, err := w.svc.PostMessage(ctx, p, conv.UUID, service.PostMessageInput{Message: ptr(text)}, "")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	post(w.agent, "two")
	last := post(nobodys, "three")
	unread := func(p *auth.Principal) *int64 {
		t.Helper()
		convs, _, err := w.svc.ListConversations(ctx, p, service.PageInput{})
		if err != nil || len(convs) != 1 {
			t.Fatalf("list: %+v, %v", convs, err)
		}
		return convs[0].Unread
	}
	for _, c := range []struct {
		who  string
		p    *auth.Principal
		want int64
	}{{"Dana's session", session, 2}, {"Dana's phone", phone, 2}, {"a token nobody made", nobodys, 0}, {"the owner", owner, 3}} {
		if got := unread(c.p); got == nil || *got != c.want {
			t.Fatalf("%s: unread %v, want %d", c.who, got, c.want)
		}
	}
	if got := unread(w.agent); got != nil {
		t.Fatalf("an agent's unread: %d, want none", *got)
	}
	if err := w.svc.MarkRead(ctx, session, conv.UUID, service.MarkReadInput{LastReadMessageID: last.ID}); err != nil {
		t.Fatal(err)
	}
	if got := unread(laptop); *got != 0 {
		t.Fatalf("Dana's laptop after her session read it: %d unread", *got)
	}
	wantCode(t, w.svc.MarkRead(ctx, w.agent, conv.UUID, service.MarkReadInput{LastReadMessageID: last.ID}), errs.Forbidden)
	wantCode(t, w.svc.MarkRead(ctx, w.reader, conv.UUID, service.MarkReadInput{LastReadMessageID: -1}), errs.InvalidArgument)
	wantCode(t, w.svc.MarkRead(ctx, w.outsider, conv.UUID, service.MarkReadInput{LastReadMessageID: last.ID}), errs.NotFound)

	// One page's markers are one query, whatever the page's length.
	cost := func() int64 {
		before := w.st.ReadQueries()
		if _, _, err := w.svc.ListConversations(ctx, owner, service.PageInput{}); err != nil {
			t.Fatal(err)
		}
		return w.st.ReadQueries() - before
	}
	one := cost()
	for range 20 {
		if _, err := w.svc.CreateConversation(ctx, nobodys, service.CreateConversationInput{Message: ptr("more")}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if many := cost(); many != one {
		t.Fatalf("listing 21 conversations ran %d queries, 1 ran %d", many, one)
	}
}
