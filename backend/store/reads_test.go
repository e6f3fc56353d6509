package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestReadMarkers: a reader's marker counts the messages after it, only moves forward,
// is the reader's own, and a page's states never name another project's conversation;
// on both engines.
func TestReadMarkers(t *testing.T) { pgtest.Engines(t, testReadMarkers) }

func testReadMarkers(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	write := func(f func(tx *Tx) error) {
		t.Helper()
		if err := s.Write(ctx, Author{}, f); err != nil {
			t.Fatal(err)
		}
	}
	a := model.Conversation{UUID: "a", ProjectID: "p", CreatedAt: now}
	other := model.Conversation{UUID: "o", ProjectID: "q", CreatedAt: now}
	b := model.Conversation{UUID: "b", ProjectID: "p", CreatedAt: now}
	var msgs []int64
	write(func(tx *Tx) error {
		if err := tx.InsertProject(ctx, &model.Project{ID: "q", Name: "q", Namespace: "default", TokenSecret: "s", CreatedAt: now}); err != nil {
			return err
		}
		for _, c := range []*model.Conversation{&a, &other, &b} {
			if err := tx.InsertConversation(ctx, c); err != nil {
				return err
			}
		}
		for _, convID := range []int64{a.ID, a.ID, a.ID, other.ID} {
			m := &model.Message{ConversationID: convID, Author: "ann", AuthorType: "user", Content: "hi", CreatedAt: now}
			if err := tx.InsertMessage(ctx, m); err != nil {
				return err
			}
			msgs = append(msgs, m.ID)
		}
		return nil
	})
	states := func(reader string) map[int64]ReadState {
		t.Helper()
		got, err := s.Read().ReadStates(ctx, "p", reader, a.ID, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := map[int64]ReadState{a.ID: {0, 3}, b.ID: {0, 0}}
	if got := states("user:1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("nothing read: %+v, want %+v (another project's conversation lies in the id range)", got, want)
	}
	write(func(tx *Tx) error { return tx.MarkRead(ctx, a.ID, "user:1", msgs[1], now) })
	if got := states("user:1")[a.ID]; got != (ReadState{msgs[1], 1}) {
		t.Fatalf("read to the second: %+v", got)
	}
	if got := states("user:2")[a.ID]; got != (ReadState{0, 3}) {
		t.Fatalf("another reader's marker: %+v", got)
	}
	write(func(tx *Tx) error { return tx.MarkRead(ctx, a.ID, "user:1", msgs[0], now.Add(time.Minute)) })
	if got := states("user:1")[a.ID]; got != (ReadState{msgs[1], 1}) {
		t.Fatalf("the marker moved back: %+v", got)
	}
	write(func(tx *Tx) error { return tx.MarkRead(ctx, a.ID, "user:1", msgs[2], now) })
	if got := states("user:1")[a.ID]; got != (ReadState{msgs[2], 0}) {
		t.Fatalf("read to the end: %+v", got)
	}
}
