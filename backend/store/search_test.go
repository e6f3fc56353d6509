package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestSearchMessagesAndDocuments: a project's messages and documents are found by any
// part of their content or name, ASCII case ignored, newest first, at most the limit;
// LIKE's wildcards in the text match only themselves; another project's are never found.
func TestSearchMessagesAndDocuments(t *testing.T) { pgtest.Engines(t, testSearchMessagesAndDocuments) }

func testSearchMessagesAndDocuments(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	name := "Release"
	var conv, other model.Conversation
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		// Project p is there from the start.
		if err := tx.InsertProject(ctx, &model.Project{ID: "q", Name: "q", Namespace: "default", TokenSecret: "s", CreatedAt: now}); err != nil {
			return err
		}
		conv = model.Conversation{UUID: "u1", ProjectID: "p", Name: &name, CreatedAt: now}
		other = model.Conversation{UUID: "u2", ProjectID: "q", CreatedAt: now}
		for _, c := range []*model.Conversation{&conv, &other} {
			if err := tx.InsertConversation(ctx, c); err != nil {
				return err
			}
		}
		for i, text := range []string{"the TICKET is ready", "100% done", "no match here", "ticket_399 again"} {
			if err := tx.InsertMessage(ctx, &model.Message{ConversationID: conv.ID, Author: "alice", AuthorType: "user", Content: text, CreatedAt: now.Add(time.Duration(i) * time.Second)}); err != nil {
				return err
			}
		}
		if err := tx.InsertMessage(ctx, &model.Message{ConversationID: other.ID, Author: "eve", AuthorType: "user", Content: "ticket elsewhere", CreatedAt: now}); err != nil {
			return err
		}
		for _, d := range []model.Document{{ConversationID: conv.ID, Name: "Ticket-notes.txt"}, {ConversationID: other.ID, Name: "ticket.txt"}} {
			d.MimeType, d.UploadedBy, d.CreatedAt = "text/plain", "alice", now
			if err := tx.InsertDocument(ctx, &d, []byte("ticket")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	texts := func(found []TextMatch, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range found {
			out = append(out, m.Text)
		}
		return out
	}
	r := s.Read()
	check := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: %q, want %q", what, got, want)
			}
		}
	}
	check("ticket", texts(r.SearchMessages(ctx, "p", "ticket", 10)), "ticket_399 again", "the TICKET is ready")
	check("limit 1", texts(r.SearchMessages(ctx, "p", "ticket", 1)), "ticket_399 again")
	check("a literal %", texts(r.SearchMessages(ctx, "p", "0%", 10)), "100% done")
	check("a literal _", texts(r.SearchMessages(ctx, "p", "t_3", 10)), "ticket_399 again")
	check("_ is no wildcard", texts(r.SearchMessages(ctx, "p", "t_i", 10)))
	check("documents", texts(r.SearchDocuments(ctx, "p", "TICKET", 10)), "Ticket-notes.txt")

	found, err := r.SearchMessages(ctx, "p", "ready", 10)
	if err != nil || len(found) != 1 || found[0].ConversationID != conv.ID || found[0].ConversationName != "Release" ||
		found[0].Author != "alice" || !found[0].CreatedAt.Equal(now) {
		t.Fatalf("a match's conversation and author: %+v, %v", found, err)
	}
}
