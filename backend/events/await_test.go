package events

import (
	"context"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// newWiredHub is newHub wired as the server wires it: the store notifies the hub of its
// commits and awaits their delivery before answering (store.Options.AwaitDelivery),
// which holds an answer at most maxWait. run starts the hub's loop.
func newWiredHub(t *testing.T, engine string, maxWait time.Duration, run bool) *Hub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	loc, err := store.ParseDB(pgtest.DBFor(t, engine, migratePostgres))
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{})
	SetMaxDeliveryWait(h, maxWait)
	st, err := store.OpenLocation(ctx, loc, t.TempDir()+"/agentdesk.db",
		store.Options{Synchronous: "NORMAL", OnCommit: h.Notify, AwaitDelivery: h.AwaitDelivery})
	if err != nil {
		t.Fatal(err)
	}
	h.Attach(st, nil)
	err = st.Write(ctx, store.Author{}, func(tx *store.Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: hubProject, Name: "hub", Namespace: "hub", TokenSecret: "s", CreatedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	if run {
		go func() { h.Run(ctx); close(done) }()
	} else {
		close(done)
	}
	t.Cleanup(func() {
		cancel()
		<-done
		st.Close()
	})
	return h
}

// commitReturns is commit, but fails the test instead of hanging should the write's
// answer never come.
func commitReturns(t *testing.T, h *Hub, types ...string) {
	t.Helper()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		commit(t, h, types...)
	}()
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the write was not answered in 30 s")
	}
}

// TestWriteAnsweredAfterDelivery: a write that makes events is answered once they are
// handed to every subscriber. The hub reads them from the database after the commit:
// without the wait, the subscriber has nothing yet when the write returns.
func TestWriteAnsweredAfterDelivery(t *testing.T) { pgtest.Engines(t, testWriteAnsweredAfterDelivery) }

func testWriteAnsweredAfterDelivery(t *testing.T, engine string) {
	h := newWiredHub(t, engine, time.Minute, true)
	sub := subscribe(t, h, -1, auth.TaskRead)
	for i := range 20 {
		commitReturns(t, h, "task.created", "task.updated")
		if got := received(sub); len(got) != 2 {
			t.Fatalf("write %d answered with %d of its 2 events handed to the subscriber (%v)", i, len(got), got)
		}
	}
}

// TestAwaitDeliveryWithoutSubscribers: with nobody following any project, a write is
// answered at once, even when the hub is not running.
func TestAwaitDeliveryWithoutSubscribers(t *testing.T) {
	h := newWiredHub(t, "sqlite", time.Hour, false)
	commitReturns(t, h, "task.created")
}

// TestAwaitDeliveryIsBounded: a hub that delivers nothing (here not running) holds a
// write's answer for maxDeliveryWait, not for ever.
func TestAwaitDeliveryIsBounded(t *testing.T) {
	h := newWiredHub(t, "sqlite", 20*time.Millisecond, false)
	subscribe(t, h, -1, auth.TaskRead)
	commitReturns(t, h, "task.created")
}
