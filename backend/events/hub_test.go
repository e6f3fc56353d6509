package events

// Direct tests of the hub's delivery (deliver) and credential checks, on a real store:
// deliver and checkCredentials are called by the test instead of by Run, so every case
// is a plain sequence of steps, with no waiting.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

const hubProject = "prj_hub"

// newHub opens a store in a temporary directory with one project, and a hub on it
// that nothing runs: the test calls deliver itself.
func newHub(t *testing.T, engine string, opts Options, check CheckFunc) *Hub {
	t.Helper()
	ctx := context.Background()
	loc, err := store.ParseDB(pgtest.DBFor(t, engine, migratePostgres))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenLocation(ctx, loc, t.TempDir()+"/agentdesk.db", store.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	err = st.Write(ctx, store.Author{}, func(tx *store.Tx) error {
		return tx.InsertProject(ctx, &model.Project{ID: hubProject, Name: "hub", Namespace: "hub", TokenSecret: "s", CreatedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	h := New(opts)
	h.Attach(st, check)
	return h
}

// migratePostgres migrates a new test database (pgtest.Migrated).
func migratePostgres(url string) error {
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		return err
	}
	return db.Close()
}

// commit stores events of the given types in one write.
func commit(t *testing.T, h *Hub, types ...string) {
	t.Helper()
	ctx := context.Background()
	err := h.store.Write(ctx, store.Author{}, func(tx *store.Tx) error {
		for i, typ := range types {
			if err := tx.AppendEvent(ctx, hubProject, typ, map[string]int{"n": i}, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// repeat is n events of one type.
func repeat(typ string, n int) []string {
	types := make([]string, n)
	for i := range types {
		types[i] = typ
	}
	return types
}

// subscribe registers a principal of the project holding scopes, for events after since.
func subscribe(t *testing.T, h *Hub, since int64, scopes ...string) *Subscriber {
	t.Helper()
	p := &auth.Principal{Kind: auth.KindToken, ProjectID: hubProject, Name: fmt.Sprint(scopes), Scopes: scopes}
	w, err := h.Watch(p)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := h.Subscribe(context.Background(), w, since)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Unsubscribe(sub)
		h.Unwatch(w)
	})
	return sub
}

// received takes what is queued for sub, without waiting: deliver has queued it all
// by the time it returns.
func received(sub *Subscriber) (seqs []int64) {
	for {
		select {
		case m := <-sub.C:
			seqs = append(seqs, m.Seq)
		default:
			return seqs
		}
	}
}

func isGone(sub *Subscriber) bool {
	select {
	case <-sub.Gone:
		return true
	default:
		return false
	}
}

func TestDeliverFiltersByPermission(t *testing.T) { pgtest.Engines(t, testDeliverFiltersByPermission) }

func testDeliverFiltersByPermission(t *testing.T, engine string) {
	h := newHub(t, engine, Options{}, nil)
	tasks := subscribe(t, h, -1, auth.TaskRead)
	messages := subscribe(t, h, -1, auth.MessagingRead)
	admin := subscribe(t, h, -1, auth.Admin)
	none := subscribe(t, h, -1)
	commit(t, h, "task.created", "message.created", "project.updated", "agent.created", "conversation.created")
	h.deliver(context.Background())

	for _, c := range []struct {
		name string
		sub  *Subscriber
		want []int64
	}{
		{"task:read", tasks, []int64{1, 4}},
		{"messaging:read", messages, []int64{2, 5}},
		{"admin", admin, []int64{3}},
		{"no scope", none, nil},
	} {
		if got := received(c.sub); !slices.Equal(got, c.want) {
			t.Errorf("%s received %v, want %v", c.name, got, c.want)
		}
	}
}

// Each event is delivered once, in order, however many pages it takes to read.
func TestDeliverPagesAndNeverRepeats(t *testing.T) {
	pgtest.Engines(t, testDeliverPagesAndNeverRepeats)
}

func testDeliverPagesAndNeverRepeats(t *testing.T, engine string) {
	h := newHub(t, engine, Options{BufferSize: 2000}, nil)
	sub := subscribe(t, h, -1, auth.TaskRead)
	commit(t, h, repeat("task.updated", 1234)...)
	h.deliver(context.Background())
	h.deliver(context.Background()) // nothing new: nothing sent again
	got := received(sub)
	if len(got) != 1234 {
		t.Fatalf("received %d events, want 1234", len(got))
	}
	for i, seq := range got {
		if seq != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d", i, seq, i+1)
		}
	}
	commit(t, h, "task.deleted")
	h.deliver(context.Background())
	if got := received(sub); !slices.Equal(got, []int64{1235}) {
		t.Errorf("after one more commit received %v, want [1235]", got)
	}
}

// A subscriber whose buffer is full is dropped (Gone closed, no longer followed) and
// the others still get everything.
func TestDeliverDropsSlowSubscriber(t *testing.T) { pgtest.Engines(t, testDeliverDropsSlowSubscriber) }

func testDeliverDropsSlowSubscriber(t *testing.T, engine string) {
	h := newHub(t, engine, Options{BufferSize: 2}, nil)
	slow := subscribe(t, h, -1, auth.TaskRead)
	fast := subscribe(t, h, -1, auth.TaskRead)
	other := subscribe(t, h, -1, auth.MessagingRead) // reads no task event: never full

	commit(t, h, "task.created", "task.updated")
	h.deliver(context.Background())
	if got := received(fast); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("fast received %v", got)
	}
	commit(t, h, "task.updated")
	h.deliver(context.Background())

	if !isGone(slow) {
		t.Error("the slow subscriber was not dropped")
	}
	if isGone(fast) || isGone(other) {
		t.Error("a subscriber that kept up was dropped")
	}
	if got := received(slow); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("slow received %v, want what fitted its buffer: [1 2]", got)
	}
	if got := received(fast); !slices.Equal(got, []int64{3}) {
		t.Errorf("fast received %v, want [3]", got)
	}
	if n := h.Subscribers(hubProject); n != 2 {
		t.Errorf("%d subscribers followed, want 2", n)
	}
	commit(t, h, "task.updated", "message.created")
	h.deliver(context.Background())
	if got := received(slow); got != nil {
		t.Errorf("the dropped subscriber received %v", got)
	}
	if got := received(other); !slices.Equal(got, []int64{5}) {
		t.Errorf("other received %v, want [5]", got)
	}
}

// A subscriber whose credential ended gets nothing more; the others are unaffected.
func TestDeliverSkipsEndedCredential(t *testing.T) {
	pgtest.Engines(t, testDeliverSkipsEndedCredential)
}

func testDeliverSkipsEndedCredential(t *testing.T, engine string) {
	h := newHub(t, engine, Options{}, nil)
	ended := subscribe(t, h, -1, auth.TaskRead)
	live := subscribe(t, h, -1, auth.TaskRead)
	commit(t, h, "task.created")
	h.deliver(context.Background())
	ended.Watch.end("token revoked")
	commit(t, h, "task.updated")
	h.deliver(context.Background())

	if got := received(ended); !slices.Equal(got, []int64{1}) {
		t.Errorf("ended received %v, want only what came before the end: [1]", got)
	}
	if got := received(live); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("live received %v, want [1 2]", got)
	}
}

// checkCredentials ends the watches whose credential is refused, with the refusal's
// message as reason, asks once per credential, and ends nothing for other errors.
func TestCheckCredentialsEndsRefused(t *testing.T) {
	pgtest.Engines(t, testCheckCredentialsEndsRefused)
}

func testCheckCredentialsEndsRefused(t *testing.T, engine string) {
	var asked []string
	check := func(_ context.Context, p *auth.Principal) error {
		asked = append(asked, p.Name)
		switch p.Name {
		case "revoked":
			return errs.Unauth("the token was revoked")
		case "busy":
			return errors.New("database is locked")
		}
		return nil
	}
	h := newHub(t, engine, Options{}, check)
	watch := func(name string) *Watch {
		w, err := h.Watch(&auth.Principal{Kind: auth.KindToken, ProjectID: hubProject, Name: name, TokenID: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Unwatch(w) })
		return w
	}
	revoked, revokedToo, busy, fine := watch("revoked"), watch("revoked"), watch("busy"), watch("fine")
	h.checkCredentials(context.Background())

	for _, w := range []*Watch{revoked, revokedToo} {
		if w.Reason() != "the token was revoked" {
			t.Errorf("reason %q, want the refusal's message", w.Reason())
		}
	}
	for _, w := range []*Watch{busy, fine} {
		if w.Reason() != "" {
			t.Errorf("%s ended: %q", w.Principal.Name, w.Reason())
		}
	}
	slices.Sort(asked)
	if want := []string{"busy", "fine", "revoked"}; !slices.Equal(asked, want) {
		t.Errorf("asked about %v, want each credential once: %v", asked, want)
	}
}

// The replay hand-off: a subscriber with a replay gets the stored events up to upTo
// from Replay and the later ones from deliver, each once and in order, even when
// events committed before it subscribed were not delivered yet.
func TestDeliverHandsOffFromReplay(t *testing.T) { pgtest.Engines(t, testDeliverHandsOffFromReplay) }

func testDeliverHandsOffFromReplay(t *testing.T, engine string) {
	h := newHub(t, engine, Options{}, nil)
	ctx := context.Background()
	live := subscribe(t, h, -1, auth.TaskRead) // the project's feed starts at seq 0
	commit(t, h, repeat("task.updated", 3)...)
	h.deliver(ctx)                               // the feed is at 3
	commit(t, h, "task.updated", "task.updated") // 4, 5: committed, not yet delivered

	sub := subscribe(t, h, 1, auth.TaskRead)
	if sub.upTo != 3 {
		t.Fatalf("replay up to %d, want the feed's last delivered seq 3", sub.upTo)
	}
	var replayed []int64
	if err := h.Replay(ctx, sub, func(m *Message) error { replayed = append(replayed, m.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	h.deliver(ctx)
	got := append(replayed, received(sub)...)
	if want := []int64{2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("replay %v then live %v, want %v", replayed, got[len(replayed):], want)
	}
	if got := received(live); !slices.Equal(got, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("live received %v", got)
	}
}

// deliver reads a project's events after the seq its feed had when it looked; by the
// time it hands them out, the feed may have been emptied and made again by a new
// subscriber at a later seq. Those events are not sent to it: they came before it.
func TestDeliverStaleReadSendsNothingTwice(t *testing.T) {
	pgtest.Engines(t, testDeliverStaleReadSendsNothingTwice)
}

func testDeliverStaleReadSendsNothingTwice(t *testing.T, engine string) {
	h := newHub(t, engine, Options{}, nil)
	ctx := context.Background()
	first := subscribe(t, h, -1, auth.TaskRead)
	commit(t, h, repeat("task.updated", 3)...)
	h.Unsubscribe(first) // the feed is gone
	h.deliverProject(ctx, hubProject, 0)

	sub := subscribe(t, h, -1, auth.TaskRead) // a new feed, at seq 3
	h.deliverProject(ctx, hubProject, 0)      // what deliver read before the feed changed
	if got := received(sub); got != nil {
		t.Errorf("the new subscriber received %v from before it subscribed", got)
	}
	commit(t, h, "task.created")
	h.deliver(ctx)
	if got := received(sub); !slices.Equal(got, []int64{4}) {
		t.Errorf("received %v, want [4]", got)
	}
	if got := received(first); got != nil {
		t.Errorf("the unsubscribed subscriber received %v", got)
	}
}

// TestPruneEventsEveryBatch: the hub's pass forgets every expired event however many
// batches (of pruneBatch, a write each) it takes, and keeps the rest.
func TestPruneEventsEveryBatch(t *testing.T) { pgtest.Engines(t, testPruneEventsEveryBatch) }

func testPruneEventsEveryBatch(t *testing.T, engine string) {
	h := newHub(t, engine, Options{Retention: time.Hour}, nil)
	ctx := context.Background()
	old := time.Now().Add(-2 * time.Hour)
	const expired = 2*pruneBatch + 1
	if err := h.store.Write(ctx, store.Author{}, func(tx *store.Tx) error {
		for i := range expired {
			if err := tx.AppendEvent(ctx, hubProject, "test.old", map[string]int{"n": i}, old); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	commit(t, h, "test.new", "test.new")
	if err := h.PruneEvents(ctx); err != nil {
		t.Fatal(err)
	}
	first, last, err := h.store.Read().EventBounds(ctx, hubProject)
	if err != nil || first != expired+1 || last != expired+2 {
		t.Fatalf("left seqs %d..%d (%v), want the two new ones, %d..%d", first, last, err, expired+1, expired+2)
	}
}

// After a commit the hub checks the credentials only when one may have ended: the count
// of credential changes moved, or a watch came since the last check; with no watch it
// reads nothing. The periodic check asks every time.
func TestCheckIfChangedAsksOnlyAfterAChange(t *testing.T) {
	pgtest.Engines(t, testCheckIfChangedAsksOnlyAfterAChange)
}

func testCheckIfChangedAsksOnlyAfterAChange(t *testing.T, engine string) {
	ctx := context.Background()
	asked := 0
	h := newHub(t, engine, Options{}, func(context.Context, *auth.Principal) error { asked++; return nil })
	expectAsked := func(step string, want int) {
		t.Helper()
		if asked != want {
			t.Fatalf("%s: asked %d times, want %d", step, asked, want)
		}
		asked = 0
	}
	write := func(fn func(tx *store.Tx) error) {
		t.Helper()
		if err := h.store.Write(ctx, store.Author{}, fn); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, h, "task.created")
	queries := h.store.ReadQueries()
	h.checkIfChanged(ctx)
	expectAsked("no watch", 0)
	if n := h.store.ReadQueries() - queries; n != 0 {
		t.Errorf("with no watch, a commit's check ran %d queries, want none", n)
	}

	subscribe(t, h, -1, auth.TaskRead)
	h.checkIfChanged(ctx)
	expectAsked("a new watch", 1)
	commit(t, h, "task.created")
	h.checkIfChanged(ctx)
	expectAsked("an event", 0)

	write(func(tx *store.Tx) error { return tx.SetProjectSecret(ctx, hubProject, "rotated") })
	h.checkIfChanged(ctx)
	expectAsked("a rotated secret", 1)
	h.checkIfChanged(ctx)
	expectAsked("nothing since", 0)

	agent := &model.Agent{ProjectID: hubProject, Name: "bot", CreatedAt: time.Now()}
	write(func(tx *store.Tx) error { return tx.InsertAgent(ctx, agent) })
	h.checkIfChanged(ctx)
	expectAsked("a new agent", 0)
	write(func(tx *store.Tx) error { return tx.DeleteAgent(ctx, hubProject, agent.ID) })
	h.checkIfChanged(ctx)
	expectAsked("a deleted agent", 1)

	h.checkCredentials(ctx)
	expectAsked("the periodic check", 1)
}

// A token revoked by another process (the command line beside a server) or server: the
// hub may read the moved count before its token cache notices the change (it looks
// every 10 ms), and then asks the database, so that the check sees the revocation.
func TestCheckIfChangedSeesAnotherStoresChange(t *testing.T) {
	pgtest.Engines(t, testCheckIfChangedSeesAnotherStoresChange)
}

func testCheckIfChangedSeesAnotherStoresChange(t *testing.T, engine string) {
	ctx := context.Background()
	loc, err := store.ParseDB(pgtest.DBFor(t, engine, migratePostgres))
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/agentdesk.db"
	var stores [2]*store.Store // the hub's, and the other process's
	for i := range stores {
		if stores[i], err = store.OpenLocation(ctx, loc, path, store.Options{Synchronous: "NORMAL"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	hash := []byte("0123456789abcdef0123456789abcdef")
	tok := &model.Token{ProjectID: hubProject, Name: "streamer", Type: "platform", Scopes: []string{auth.TaskRead}, CreatedAt: time.Now()}
	err = stores[1].Write(ctx, store.Author{}, func(tx *store.Tx) error {
		if err := tx.InsertProject(ctx, &model.Project{ID: hubProject, Name: "hub", Namespace: "hub", TokenSecret: "s", CreatedAt: time.Now()}); err != nil {
			return err
		}
		return tx.InsertToken(ctx, tok, hash)
	})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{})
	h.Attach(stores[0], func(ctx context.Context, p *auth.Principal) error {
		tok, err := stores[0].TokenByHash(ctx, p.TokenHash) // through the cache, as service.CheckCredentials
		if err == nil && tok.RevokedAt != nil {
			return errs.Unauth("this token was revoked")
		}
		return err
	})
	w, err := h.Watch(&auth.Principal{Kind: auth.KindToken, ProjectID: hubProject, TokenID: tok.ID, TokenHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unwatch(w)
	h.checkIfChanged(ctx) // caches the token
	before, err := stores[0].CredentialChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The other store revokes the token. Its write is answered 10 ms after its commit;
	// the hub checks in between, as soon as it sees the count moved, while the cache
	// still takes the last look, made just before the commit, as good.
	revoked := make(chan error, 1)
	go func() {
		revoked <- stores[1].Write(ctx, store.Author{}, func(tx *store.Tx) error {
			if err := tx.RevokeToken(ctx, hubProject, tok.ID, time.Now()); err != nil {
				return err
			}
			_, err := stores[0].TokenByHash(ctx, hash) // a look that cannot see it yet
			return err
		})
	}()
	for moved := false; !moved; {
		select {
		case err := <-revoked:
			if err != nil {
				t.Fatal(err)
			}
			revoked <- nil // committed: the count moved
		default:
		}
		n, err := stores[0].CredentialChanges(ctx)
		if err != nil {
			t.Fatal(err)
		}
		moved = n != before
	}
	h.checkIfChanged(ctx)
	if err := <-revoked; err != nil {
		t.Fatal(err)
	}
	if w.Reason() == "" {
		t.Fatal("the check after the count moved passed the revoked token")
	}
}
