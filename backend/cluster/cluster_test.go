package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(serveEnv); url != "" {
		serveForTest(url) // an instance of TestTwoInstances
		return
	}
	pgtest.Main(m)
}

// waitFor bounds how long a test waits for something another server must do: a bound
// for failing, not a timing assertion (it takes milliseconds).
const waitFor = 15 * time.Second

// twoServers starts two in-process servers on one new PostgreSQL database.
func twoServers(t *testing.T) (a, b *testenv.Env) {
	t.Helper()
	loc := testenv.ParseDB(t, pgtest.Migrated(t, testenv.MigratePostgres))
	a = testenv.StartWith(t, server.Config{DB: loc, WebhooksAllowPrivate: true}) // webhooks to loopback receivers
	b = testenv.StartWith(t, server.Config{DB: loc, WebhooksAllowPrivate: true})
	return a, b
}

// TestStoresWakeEachOther: a commit on one store calls the other's OnForeign (its
// NOTIFY reaches the other's listener), never its own, and the other reads its events.
func TestStoresWakeEachOther(t *testing.T) {
	url := pgtest.Migrated(t, testenv.MigratePostgres)
	ctx := context.Background()
	open := func() (*store.Store, chan struct{}) {
		wakes := make(chan struct{}, 100)
		st, err := store.OpenLocation(ctx, testenv.ParseDB(t, url), "", store.Options{OnForeign: func() { wakes <- struct{}{} }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st, wakes
	}
	a, aWakes := open()
	b, bWakes := open()
	now := time.Now().UTC()
	write := func(st *store.Store, typ string) {
		t.Helper()
		if err := st.Write(ctx, store.Author{}, func(tx *store.Tx) error {
			if typ == "first" {
				if err := tx.InsertProject(ctx, &model.Project{ID: "prj_wake", Name: "wake", Namespace: "wake", TokenSecret: "s", CreatedAt: now}); err != nil {
					return err
				}
			}
			return tx.AppendEvent(ctx, "prj_wake", typ, map[string]string{}, now)
		}); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(c chan struct{}, who string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(waitFor):
			t.Fatalf("%s was not told of the other store's commit", who)
		}
	}
	write(a, "first")
	wait(bWakes, "b")
	if evs, err := b.Read().EventsSince(ctx, "prj_wake", 0, 100); err != nil || len(evs) != 1 || evs[0].Type != "first" {
		t.Fatalf("b reads %v, %v; want a's event", evs, err)
	}
	write(b, "second")
	wait(aWakes, "a")
	// Notifications arrive in commit order: one for a's own commit would have come first.
	if len(aWakes) != 0 || len(bWakes) != 0 {
		t.Fatalf("a store was told of its own commit (a %d, b %d extra wakes)", len(aWakes), len(bWakes))
	}
	if !a.Listening() || !b.Listening() {
		t.Fatal("a listener is not listening")
	}
}

// TestEventsReachTheOtherServer: a task created through one server reaches the event
// stream of a client of the other, in the same seq order.
func TestEventsReachTheOtherServer(t *testing.T) {
	a, b := twoServers(t)
	tokA := a.Token(t, a.Project.ID, auth.TaskRead, auth.TaskWrite)
	tokB := b.Token(t, b.Project.ID, auth.TaskRead, auth.TaskWrite)
	// Every scope, so that the streams carry every event: seqs without gaps.
	streamB := openStream(t, b.URL, b.Token(t, b.Project.ID, auth.PlatformScopes...))
	streamA := openStream(t, a.URL, a.Token(t, a.Project.ID, auth.PlatformScopes...))
	for i := range 5 {
		env, tok := a, tokA
		if i%2 == 1 {
			env, tok = b, tokB
		}
		if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: fmt.Sprintf(`{"summary":"t%d"}`, i)}); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	_, last, err := a.Server.Store().Read().EventBounds(context.Background(), a.Project.ID)
	if err != nil {
		t.Fatal(err)
	}
	gotA, gotB := streamA.until(t, last), streamB.until(t, last)
	if err := sameNoGap(gotA, gotB); err != nil {
		t.Fatal(err)
	}
}

// TestListAfterOtherServersWrite: a list through one server right after a change
// acknowledged by the other shows the change (no task JSON cached from before it).
func TestListAfterOtherServersWrite(t *testing.T) {
	a, b := twoServers(t)
	tokA := a.Token(t, a.Project.ID, auth.TaskRead, auth.TaskWrite)
	tokB := b.Token(t, b.Project.ID, auth.TaskRead, auth.TaskWrite)
	var task model.Task
	a.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tokA, Body: `{"summary":"x"}`}).JSON(t, &task)
	statuses := []string{"Doing", "Waiting", "Done", "Failed", "Todo"}
	for _, st := range statuses {
		// Twice, so that a cache would hold the page (a page with a limit is cached;
		// a whole list is streamed).
		for range 2 {
			b.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks?limit=50", Token: tokB})
		}
		if r := a.Do(t, testenv.Request{Method: "PUT", Path: fmt.Sprintf("/api/tasks/%d/status", task.ID), Token: tokA, Body: `{"status":"` + st + `"}`}); r.Status != 200 {
			t.Fatalf("status %s: %d %s", st, r.Status, r.Body)
		}
		var list []model.Task
		b.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks?limit=50", Token: tokB}).JSON(t, &list)
		if len(list) != 1 || list[0].Status != st {
			t.Fatalf("b lists %+v right after a set the status to %s", list, st)
		}
	}
}

// TestJobClaimedOnce: a due job that one server's write is running is left alone by
// the other's scheduler pass (counted as held), and not run again once that write
// commits.
func TestJobClaimedOnce(t *testing.T) {
	a, b := twoServers(t)
	ctx := context.Background()
	owner := auth.Owner(a.Project.ID)
	name, cron, summary := "nightly", "0 3 * * *", "from the job"
	job, err := a.Service.CreateJob(ctx, owner, service.JobInput{Name: &name, Cron: &cron, Summary: &summary})
	if err != nil {
		t.Fatal(err)
	}
	now := job.NextRunAt.Add(time.Second) // it is due
	startedAt := job.NextRunAt.Add(-time.Minute)

	// a's write claims the job and holds it until told.
	claimed, release, done := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- a.Server.Store().Write(ctx, store.Author{}, func(tx *store.Tx) error {
			j, err := tx.ClaimDueJob(ctx, job.ProjectID, job.ID, now)
			claimed <- err
			if err != nil {
				return err
			}
			<-release
			later := now.Add(24 * time.Hour)
			j.NextRunAt = &later
			return tx.UpdateJob(ctx, j)
		})
	}()
	if err := <-claimed; err != nil {
		t.Fatalf("a claims the job: %v", err)
	}
	var once sync.Once
	defer once.Do(func() { close(release) })
	passB := make(chan struct {
		held int
		err  error
	}, 1)
	go func() {
		held, err := b.Service.RunDueJobsHeld(ctx, now, startedAt)
		passB <- struct {
			held int
			err  error
		}{held, err}
	}()
	var held int
	select {
	case r := <-passB:
		if r.err != nil {
			t.Fatal(r.err)
		}
		held = r.held
	case <-time.After(waitFor):
		// b waits for a's lock: it would then run the job again. Let a go to see.
		once.Do(func() { close(release) })
		r := <-passB
		t.Errorf("b's pass waited for a's write (err %v)", r.err)
	}
	once.Do(func() { close(release) })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if held != 1 {
		t.Errorf("b's pass counted %d held jobs, want 1", held)
	}
	if h, err := b.Service.RunDueJobsHeld(ctx, now, startedAt); err != nil || h != 0 {
		t.Fatalf("b's pass after a's commit: held %d, %v", h, err)
	}
	tasks, _, err := b.Service.ListTasks(ctx, owner, service.ListTasksInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 0 {
		t.Fatalf("b ran the job a held: %d tasks", len(tasks))
	}
}

// TestWebhookDeliveredOnce: two servers' deliverers send each event of a webhook once,
// in seq order.
func TestWebhookDeliveredOnce(t *testing.T) {
	a, b := twoServers(t)
	ctx := context.Background()
	var mu sync.Mutex
	got := map[string]int{}
	var order []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A slow receiver: a delivery is in flight long enough for the other server's
		// deliverer to look (it polls every second).
		time.Sleep(40 * time.Millisecond)
		mu.Lock()
		id := r.Header.Get("webhook-id")
		got[id]++
		order = append(order, id)
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	owner := auth.Owner(a.Project.ID)
	url := receiver.URL
	hook, err := a.Service.CreateWebhook(ctx, owner, service.WebhookInput{URL: &url})
	if err != nil {
		t.Fatal(err)
	}
	first := hook.Cursor // the events after it are the webhook's
	tokA := a.Token(t, a.Project.ID, auth.TaskRead, auth.TaskWrite)
	tokB := b.Token(t, b.Project.ID, auth.TaskRead, auth.TaskWrite)
	const n = 40
	for i := range n {
		env, tok := a, tokA
		if i%2 == 1 {
			env, tok = b, tokB
		}
		if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: fmt.Sprintf(`{"summary":"w%d"}`, i)}); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	_, last, err := a.Server.Store().Read().EventBounds(ctx, a.Project.ID)
	if err != nil {
		t.Fatal(err)
	}
	lastID := service.WebhookMessageID(a.Project.ID, last)
	deadline := time.Now().Add(2 * waitFor)
	for {
		mu.Lock()
		done := got[lastID] > 0
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last event (%s) was not delivered", lastID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, c := range got {
		if c != 1 {
			t.Errorf("%s delivered %d times", id, c)
		}
	}
	if int64(len(order)) != last-first {
		t.Errorf("%d deliveries for %d events", len(order), last-first)
	}
	for i, id := range order {
		if want := service.WebhookMessageID(a.Project.ID, first+1+int64(i)); id != want {
			t.Fatalf("delivery %d is %s, want %s: not in seq order", i, id, want)
		}
	}
}

// frame is what the event stream sends, as far as these tests look.
type frame struct {
	Seq  int64
	Type string
}

type stream struct{ conn *websocket.Conn }

// openStream follows the project's events from the first one (?since=0).
func openStream(t *testing.T, baseURL, token string) *stream {
	t.Helper()
	u := strings.Replace(baseURL, "http://", "ws://", 1) + "/api/events?since=0"
	conn, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &stream{conn}
}

// until reads frames until one of seq last or later.
func (s *stream) until(t *testing.T, last int64) []frame {
	t.Helper()
	var out []frame
	for len(out) == 0 || out[len(out)-1].Seq < last {
		s.conn.SetReadDeadline(time.Now().Add(waitFor))
		var f frame
		if err := s.conn.ReadJSON(&f); err != nil {
			t.Fatalf("read the stream (after %d frames, waiting for seq %d): %v", len(out), last, err)
		}
		out = append(out, f)
	}
	return out
}

// sameNoGap checks that two streams delivered the same events in the same order, with
// seqs going up by one from 1.
func sameNoGap(a, b []frame) error {
	if len(a) != len(b) {
		return fmt.Errorf("the streams delivered %d and %d events", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("event %d differs: %+v and %+v", i, a[i], b[i])
		}
		if a[i].Seq != int64(i+1) {
			return fmt.Errorf("event %d has seq %d: a gap or a repeat", i, a[i].Seq)
		}
	}
	return nil
}
