package jobs_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/jobs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
)

// verifyStandardWebhook checks a delivery the way the Standard Webhooks reference
// libraries do, written here independently of the server's signing code: the secret
// without its whsec_ prefix is base64; the signed content is "id.timestamp.body"; the
// header is a space-separated list of "v1,<base64 HMAC-SHA256>", one of which must
// match (compared in constant time).
func verifyStandardWebhook(secret string, h http.Header, body []byte) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("missing headers: id %q timestamp %q signature %q", id, ts, sigs)
	}
	if strings.Contains(id, ".") {
		return fmt.Errorf("webhook-id %q contains a full stop", id)
	}
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil {
		return fmt.Errorf("webhook-timestamp %q is not Unix seconds", ts)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, sig := range strings.Split(sigs, " ") {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no signature of %q matches", sigs)
}

// The published test vector of the Standard Webhooks libraries.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorPayload   = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestWebhookSignatureTestVector(t *testing.T) {
	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTimestamp))
	h.Set("webhook-signature", vectorSignature)
	if err := verifyStandardWebhook(vectorSecret, h, []byte(vectorPayload)); err != nil {
		t.Fatalf("the test's verifier refuses the published vector: %v", err)
	}
	h.Set("webhook-signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= "+vectorSignature)
	if err := verifyStandardWebhook(vectorSecret, h, []byte(vectorPayload)); err != nil {
		t.Fatalf("a list with the right signature second: %v", err)
	}
	if err := verifyStandardWebhook(vectorSecret, h, []byte(vectorPayload+" ")); err == nil {
		t.Fatal("the verifier accepts a changed body")
	}
	got, err := service.SignWebhook(vectorSecret, vectorID, vectorTimestamp, []byte(vectorPayload))
	if err != nil || got != vectorSignature {
		t.Fatalf("SignWebhook = %q, %v; the published vector says %q", got, err, vectorSignature)
	}
}

// received is one request a receiver got.
type received struct {
	id, timestamp string
	frame         model.Event
	body          []byte
	status        int
}

// receiver is a real HTTP server that verifies every request's signature with the
// independent verifier and answers with the status its answer function gives.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	secret atomic.Value // string
	answer atomic.Value // func(w http.ResponseWriter) int
	mu     sync.Mutex
	got    []received
	signal chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, signal: make(chan struct{}, 1000)}
	r.answer.Store(func(w http.ResponseWriter) int { return http.StatusOK })
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		secret, _ := r.secret.Load().(string)
		if err := verifyStandardWebhook(secret, req.Header, body); err != nil {
			r.t.Errorf("delivery %s: %v", req.Header.Get("webhook-id"), err)
		}
		if ct := req.Header.Get("Content-Type"); ct != "application/json" || req.Method != http.MethodPost {
			r.t.Errorf("%s with Content-Type %q, want POST application/json", req.Method, ct)
		}
		var frame model.Event
		if err := json.Unmarshal(body, &frame); err != nil {
			r.t.Errorf("body %s: %v", body, err)
		}
		status := r.answer.Load().(func(w http.ResponseWriter) int)(w)
		r.mu.Lock()
		r.got = append(r.got, received{id: req.Header.Get("webhook-id"), timestamp: req.Header.Get("webhook-timestamp"), frame: frame, body: body, status: status})
		r.mu.Unlock()
		r.signal <- struct{}{}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) answerWith(status int) {
	r.answer.Store(func(w http.ResponseWriter) int { w.WriteHeader(status); return status })
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor waits until the receiver has had n requests in all.
func (r *receiver) waitFor(n int) []received {
	r.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		if got := r.requests(); len(got) >= n {
			return got
		}
		select {
		case <-r.signal:
		case <-deadline:
			r.t.Fatalf("the receiver had %d requests, want %d", len(r.requests()), n)
		}
	}
}

// eventually waits for cond, checked every few milliseconds, for at most 15 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func createWebhook(t *testing.T, svc *service.Service, pid string, rcv *receiver, events ...string) *model.Webhook {
	t.Helper()
	url := rcv.srv.URL + "/hook"
	w, err := svc.CreateWebhook(context.Background(), auth.Owner(pid), service.WebhookInput{URL: &url, Events: &events})
	if err != nil {
		t.Fatalf("create webhook: %v", err)
	}
	rcv.secret.Store(w.Secret)
	return w
}

func webhook(t *testing.T, svc *service.Service, pid string, id int64) model.Webhook {
	t.Helper()
	list, err := svc.Webhooks(context.Background(), auth.Owner(pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list {
		if w.ID == id {
			return w
		}
	}
	t.Fatalf("webhook %d not found", id)
	return model.Webhook{}
}

func deliveries(t *testing.T, svc *service.Service, pid string, id int64) []model.WebhookDelivery {
	t.Helper()
	ds, err := svc.WebhookDeliveries(context.Background(), auth.Owner(pid), id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func newTask(t *testing.T, svc *service.Service, pid, summary string) *model.Task {
	t.Helper()
	task, err := svc.CreateTask(context.Background(), auth.Owner(pid), service.CreateTaskInput{Summary: summary}, "")
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// waitRetry waits until the webhook has a retry set after its failed attempts.
func waitRetry(t *testing.T, svc *service.Service, pid string, id int64, attempts int) model.Webhook {
	t.Helper()
	var w model.Webhook
	eventually(t, fmt.Sprintf("webhook %d's attempt %d to be recorded", id, attempts), func() bool {
		w = webhook(t, svc, pid, id)
		return w.Attempts == attempts && (w.NextAttemptAt != nil || !w.Enabled)
	})
	return w
}

// A receiver that fails then recovers gets every event, in seq order, each signed;
// retries carry the same webhook-id; none is sent again after a 2xx.
func TestWebhookFailsThenRecovers(t *testing.T) { pgtest.Engines(t, testWebhookFailsThenRecovers) }

func testWebhookFailsThenRecovers(t *testing.T, engine string) {
	clock := jobstest.NewManualClock(testNow())
	srv := start(t, newSite(t, engine), clock)
	defer stop(t, srv)
	svc, pid := srv.Service, project(t, srv.Service)
	rcv := newReceiver(t)
	rcv.answerWith(http.StatusServiceUnavailable)
	hook := createWebhook(t, svc, pid, rcv)
	var tasks []*model.Task
	for i := range 3 {
		tasks = append(tasks, newTask(t, svc, pid, fmt.Sprintf("task %d", i)))
	}
	rcv.waitFor(1)
	w := waitRetry(t, svc, pid, hook.ID, 1)
	if want := clock.Now().Add(5 * time.Second); !w.NextAttemptAt.Equal(want) || w.FailingSince == nil {
		t.Fatalf("after the first failure: next attempt %v, failing since %v; want %v", w.NextAttemptAt, w.FailingSince, want)
	}
	rcv.answerWith(http.StatusNoContent)
	clock.Advance(5 * time.Second)
	got := rcv.waitFor(4)
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4: %+v", len(got), got)
	}
	if got[0].id != got[1].id || got[0].frame.Seq != got[1].frame.Seq || got[0].status != 503 || got[1].status != 204 {
		t.Fatalf("the retry of %s: %+v", got[0].id, got[1])
	}
	for i, task := range tasks {
		r := got[i+1]
		var data model.Task
		raw, _ := json.Marshal(r.frame.Data)
		_ = json.Unmarshal(raw, &data)
		if r.frame.Type != service.EventTaskCreated || data.ID != task.ID || r.frame.ProjectID != pid || r.id != service.WebhookMessageID(pid, r.frame.Seq) {
			t.Fatalf("request %d: %s %s for task %d, want task.created of task %d", i+1, r.id, r.frame.Type, data.ID, task.ID)
		}
		if i > 0 && r.frame.Seq <= got[i].frame.Seq {
			t.Fatalf("seq %d after %d", r.frame.Seq, got[i].frame.Seq)
		}
		if r.timestamp != strconv.FormatInt(clock.Now().Unix(), 10) {
			t.Fatalf("webhook-timestamp %s, want the clock's %d", r.timestamp, clock.Now().Unix())
		}
	}
	eventually(t, "the cursor to reach the last event", func() bool {
		w = webhook(t, svc, pid, hook.ID)
		return w.Cursor == got[3].frame.Seq
	})
	if w.Attempts != 0 || w.FailingSince != nil || w.NextAttemptAt != nil {
		t.Fatalf("after recovering: %+v", w)
	}
	ds := deliveries(t, svc, pid, hook.ID)
	if len(ds) != 4 || ds[3].Attempt != 1 || *ds[3].Status != 503 || ds[2].Attempt != 2 || !ds[2].OK() || ds[0].Attempt != 1 || !ds[0].OK() {
		t.Fatalf("deliveries: %+v", ds)
	}
	// Another event: sent once, and nothing again.
	newTask(t, svc, pid, "later")
	got = rcv.waitFor(5)
	eventually(t, "the cursor to move", func() bool { return webhook(t, svc, pid, hook.ID).Cursor == got[4].frame.Seq })
	if n := len(rcv.requests()); n != 5 {
		t.Fatalf("%d requests, want 5", n)
	}
}

// Stopped in the middle of its retries, the server resumes from the webhook's cursor
// when started again on the same directory: the failed event first, then the rest.
func TestWebhookResumesAfterRestart(t *testing.T) { pgtest.Engines(t, testWebhookResumesAfterRestart) }

func testWebhookResumesAfterRestart(t *testing.T, engine string) {
	clock := jobstest.NewManualClock(testNow())
	dir := newSite(t, engine)
	srv := start(t, dir, clock)
	svc, pid := srv.Service, project(t, srv.Service)
	rcv := newReceiver(t)
	rcv.answerWith(http.StatusInternalServerError)
	hook := createWebhook(t, svc, pid, rcv)
	first := newTask(t, svc, pid, "before the restart")
	rcv.waitFor(1)
	waitRetry(t, svc, pid, hook.ID, 1)
	clock.Advance(5 * time.Second)
	rcv.waitFor(2)
	w := waitRetry(t, svc, pid, hook.ID, 2)
	newTask(t, svc, pid, "queued behind it")
	stop(t, srv)

	rcv.answerWith(http.StatusOK)
	srv = start(t, dir, clock)
	defer stop(t, srv)
	svc = srv.Service
	if n := len(rcv.requests()); n != 2 {
		t.Fatalf("%d requests before the retry is due, want 2", n)
	}
	// The retry comes when its time does, with no new event to wake the deliverer; its
	// attempt number goes on from before the restart.
	clock.Set(*w.NextAttemptAt)
	rcv.waitFor(4)
	if ds := deliveries(t, svc, pid, hook.ID); len(ds) < 3 || ds[len(ds)-3].Attempt != 3 || !ds[len(ds)-3].OK() {
		t.Fatalf("the first attempt after the restart: %+v, want attempt 3, a success", ds)
	}
	third := newTask(t, svc, pid, "after the restart")
	got := rcv.waitFor(5)
	var ids []int64
	for _, r := range got[2:] {
		var data model.Task
		raw, _ := json.Marshal(r.frame.Data)
		_ = json.Unmarshal(raw, &data)
		ids = append(ids, data.ID)
	}
	if got[2].id != got[0].id || ids[0] != first.ID || ids[2] != third.ID || got[3].frame.Seq <= got[2].frame.Seq || got[4].frame.Seq <= got[3].frame.Seq {
		t.Fatalf("after the restart: %v (tasks %d, ..., %d)", ids, first.ID, third.ID)
	}
	eventually(t, "the cursor", func() bool { return webhook(t, svc, pid, hook.ID).Cursor == got[4].frame.Seq })
	if n := len(rcv.requests()); n != 5 {
		t.Fatalf("%d requests, want 5", n)
	}
}

// A webhook failing for three days is disabled, with a webhook.disabled event; its
// attempts follow the backoff.
func TestWebhookDisabledAfterThreeDays(t *testing.T) {
	pgtest.Engines(t, testWebhookDisabledAfterThreeDays)
}

func testWebhookDisabledAfterThreeDays(t *testing.T, engine string) {
	start0 := testNow()
	clock := jobstest.NewManualClock(start0)
	srv := start(t, newSite(t, engine), clock)
	defer stop(t, srv)
	svc, pid := srv.Service, project(t, srv.Service)
	rcv := newReceiver(t)
	rcv.answerWith(http.StatusBadGateway)
	hook := createWebhook(t, svc, pid, rcv)
	newTask(t, svc, pid, "never delivered")
	var at []time.Duration // each attempt's time after the first
	for attempt := 1; ; attempt++ {
		rcv.waitFor(attempt)
		at = append(at, clock.Now().Sub(start0))
		w := waitRetry(t, svc, pid, hook.ID, attempt)
		if !w.Enabled {
			if !strings.Contains(w.DisabledReason, "3 days") {
				t.Fatalf("disabled reason %q", w.DisabledReason)
			}
			break
		}
		if attempt > 20 {
			t.Fatal("still enabled after 20 attempts")
		}
		clock.Set(*w.NextAttemptAt)
	}
	h := time.Hour
	want := []time.Duration{0, 5 * time.Second, 5*time.Minute + 5*time.Second, 35*time.Minute + 5*time.Second,
		2*h + 35*time.Minute + 5*time.Second, 7*h + 35*time.Minute + 5*time.Second, 17*h + 35*time.Minute + 5*time.Second,
		41*h + 35*time.Minute + 5*time.Second, 65*h + 35*time.Minute + 5*time.Second, 72 * h}
	if fmt.Sprint(at) != fmt.Sprint(want) {
		t.Fatalf("attempts at %v, want %v", at, want)
	}
	eventually(t, "a webhook.disabled event", func() bool {
		evs, err := svc.Store().Read().EventsSince(context.Background(), pid, 0, 1000)
		return err == nil && evs[len(evs)-1].Type == service.EventWebhookDisabled
	})
	// Disabled: nothing more is sent, even when due.
	newTask(t, svc, pid, "while disabled")
	clock.Advance(48 * time.Hour)
	if n := len(rcv.requests()); n != len(want) {
		t.Fatalf("%d requests while disabled, want %d", n, len(want))
	}
	// Enabled again, it resumes from its cursor at once.
	rcv.answerWith(http.StatusOK)
	enabled := true
	if _, err := svc.UpdateWebhook(context.Background(), auth.Owner(pid), hook.ID, service.WebhookInput{Enabled: &enabled}); err != nil {
		t.Fatal(err)
	}
	got := rcv.waitFor(len(want) + 1)
	if got[len(want)].id != got[0].id {
		t.Fatalf("after enabling: %s, want the stuck %s", got[len(want)].id, got[0].id)
	}
}

// redeliver sends a delivery's event again, with its webhook-id, and logs attempt 0.
func TestWebhookRedeliver(t *testing.T) { pgtest.Engines(t, testWebhookRedeliver) }

func testWebhookRedeliver(t *testing.T, engine string) {
	env := startEnv(t, engine)
	svc, pid := env.svc, env.pid
	rcv := newReceiver(t)
	hook := createWebhook(t, svc, pid, rcv)
	newTask(t, svc, pid, "once")
	got := rcv.waitFor(1)
	var ds []model.WebhookDelivery
	eventually(t, "the delivery", func() bool { ds = deliveries(t, svc, pid, hook.ID); return len(ds) == 1 })
	rcv.answerWith(http.StatusAccepted)
	d, err := svc.Redeliver(context.Background(), auth.Owner(pid), ds[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	again := rcv.waitFor(2)
	if d.Attempt != 0 || *d.Status != 202 || again[1].id != got[0].id || string(again[1].body) != string(got[0].body) {
		t.Fatalf("redelivery %+v: %s %s", d, again[1].id, again[1].body)
	}
	if ds = deliveries(t, svc, pid, hook.ID); len(ds) != 2 || ds[0].ID != d.ID {
		t.Fatalf("deliveries after redeliver: %+v", ds)
	}
	other := env.srv.Service
	if _, err := other.Redeliver(context.Background(), auth.Owner(env.other), d.ID); err == nil {
		t.Fatal("another project's delivery was redelivered")
	}
}

// A redirect is a failed attempt: its target is never asked.
func TestWebhookNoRedirect(t *testing.T) { pgtest.Engines(t, testWebhookNoRedirect) }

func testWebhookNoRedirect(t *testing.T, engine string) {
	env := startEnv(t, engine)
	svc, pid := env.svc, env.pid
	target := newReceiver(t)
	rcv := newReceiver(t)
	rcv.answer.Store(func(w http.ResponseWriter) int {
		w.Header().Set("Location", target.srv.URL+"/elsewhere")
		w.WriteHeader(http.StatusTemporaryRedirect)
		return http.StatusTemporaryRedirect
	})
	hook := createWebhook(t, svc, pid, rcv)
	newTask(t, svc, pid, "redirected")
	rcv.waitFor(1)
	w := waitRetry(t, svc, pid, hook.ID, 1)
	ds := deliveries(t, svc, pid, hook.ID)
	if len(ds) != 1 || ds[0].OK() || ds[0].Status == nil || *ds[0].Status != 307 || w.Cursor >= rcv.requests()[0].frame.Seq {
		t.Fatalf("deliveries %+v, webhook %+v", ds, w)
	}
	if n := len(target.requests()); n != 0 {
		t.Fatalf("the redirect's target got %d requests", n)
	}
}

// An endless answer is read only so far: the attempt succeeds at once and keeps 1 KiB.
func TestWebhookAnswerCapped(t *testing.T) { pgtest.Engines(t, testWebhookAnswerCapped) }

func testWebhookAnswerCapped(t *testing.T, engine string) {
	env := startEnv(t, engine)
	svc, pid := env.svc, env.pid
	rcv := newReceiver(t)
	stopWriting := make(chan struct{})
	defer close(stopWriting)
	rcv.answer.Store(func(w http.ResponseWriter) int {
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("x", 32<<10))
		for {
			select {
			case <-stopWriting:
				return http.StatusOK
			default:
			}
			if _, err := w.Write(chunk); err != nil {
				return http.StatusOK // the client stopped reading and closed
			}
			w.(http.Flusher).Flush()
		}
	})
	hook := createWebhook(t, svc, pid, rcv)
	newTask(t, svc, pid, "answered at length")
	var ds []model.WebhookDelivery
	eventually(t, "the delivery", func() bool { ds = deliveries(t, svc, pid, hook.ID); return len(ds) == 1 })
	if !ds[0].OK() || ds[0].Error != "" || len(ds[0].Response) != service.WebhookResponseExcerpt {
		t.Fatalf("delivery: ok %v, error %q, %d bytes of answer", ds[0].OK(), ds[0].Error, len(ds[0].Response))
	}
}

// A receiver that never answers holds up only its own webhook: writes are answered and
// another webhook gets every event meanwhile.
func TestWebhookSlowReceiverHoldsOnlyItself(t *testing.T) {
	pgtest.Engines(t, testWebhookSlowReceiverHoldsOnlyItself)
}

func testWebhookSlowReceiverHoldsOnlyItself(t *testing.T, engine string) {
	env := startEnv(t, engine)
	svc, pid := env.svc, env.pid
	slow, fast := newReceiver(t), newReceiver(t)
	release := make(chan struct{})
	defer close(release) // before the receivers close: their handlers must return
	slow.answer.Store(func(w http.ResponseWriter) int {
		<-release
		return http.StatusOK
	})
	slowHook := createWebhook(t, svc, pid, slow)
	fastHook := createWebhook(t, svc, pid, fast, "task.*")
	for i := range 20 {
		newTask(t, svc, pid, fmt.Sprintf("task %d", i))
	}
	got := fast.waitFor(20)
	for i := 1; i < len(got); i++ {
		if got[i].frame.Seq <= got[i-1].frame.Seq {
			t.Fatalf("seq %d after %d", got[i].frame.Seq, got[i-1].frame.Seq)
		}
	}
	eventually(t, "the fast webhook's cursor", func() bool { return webhook(t, svc, pid, fastHook.ID).Cursor == got[19].frame.Seq })
	if w := webhook(t, svc, pid, slowHook.ID); len(deliveries(t, svc, pid, slowHook.ID)) != 0 || w.Cursor >= got[0].frame.Seq {
		t.Fatalf("the slow webhook moved on: %+v", w)
	}
}

// webhook.test goes to its webhook only; a filter sends only its events.
func TestWebhookTestEventAndFilter(t *testing.T) { pgtest.Engines(t, testWebhookTestEventAndFilter) }

func testWebhookTestEventAndFilter(t *testing.T, engine string) {
	env := startEnv(t, engine)
	svc, pid := env.svc, env.pid
	all, tasksOnly := newReceiver(t), newReceiver(t)
	hookAll := createWebhook(t, svc, pid, all)
	createWebhook(t, svc, pid, tasksOnly, "task.*")
	seq, err := svc.TestWebhook(context.Background(), auth.Owner(pid), hookAll.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateAgent(context.Background(), auth.Owner(pid), "builder"); err != nil {
		t.Fatal(err)
	}
	newTask(t, svc, pid, "for both")
	got := all.waitFor(4) // the other webhook's creation first
	if got[0].frame.Type != service.EventWebhookCreated || got[1].frame.Type != service.EventWebhookTest || got[1].frame.Seq != seq ||
		got[2].frame.Type != "agent.created" || got[3].frame.Type != service.EventTaskCreated {
		t.Fatalf("all events: %s %s %s %s", got[0].frame.Type, got[1].frame.Type, got[2].frame.Type, got[3].frame.Type)
	}
	only := tasksOnly.waitFor(1)
	if only[0].frame.Type != service.EventTaskCreated {
		t.Fatalf("task.* got %s first", only[0].frame.Type)
	}
}

// testNow starts the manual clocks at the real time: the event log is pruned by real
// time (7 days), so events stamped long ago would be forgotten at once.
func testNow() time.Time { return time.Now().UTC().Truncate(time.Second) }

type webhookEnv struct {
	srv        *server.Server
	svc        *service.Service
	pid, other string
}

func startEnv(t *testing.T, engine string) webhookEnv {
	srv := start(t, newSite(t, engine), jobstest.NewManualClock(testNow()))
	t.Cleanup(func() { stop(t, srv) })
	pid := project(t, srv.Service)
	other, err := srv.Service.CreateProject(context.Background(), auth.Owner(""), "other", "")
	if err != nil {
		t.Fatal(err)
	}
	return webhookEnv{srv: srv, svc: srv.Service, pid: pid, other: other.ID}
}

// Eight webhooks of one project whose receivers hang hold at most four places at once:
// another project's delivery goes out meanwhile, before any of the eight's attempts has
// ended. Let go, the other four of the eight are sent to, still at most four at once.
func TestWebhookFairBetweenProjects(t *testing.T) { pgtest.Engines(t, testWebhookFairBetweenProjects) }

func testWebhookFairBetweenProjects(t *testing.T, engine string) {
	env := startEnv(t, engine)
	svc := env.svc
	var mu sync.Mutex
	inFlight, mostInFlight, ended := 0, 0, 0
	asked := map[string]bool{} // receivers (host:port) that got a request
	release := make(chan struct{})
	hang := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		inFlight++
		mostInFlight = max(mostInFlight, inFlight)
		asked[req.Host] = true
		mu.Unlock()
		select {
		case <-release:
		case <-req.Context().Done(): // the deliverer gave up
		}
		mu.Lock()
		inFlight--
		ended++
		mu.Unlock()
	})
	counts := func() (int, int, int, int) { // in flight, most in flight, ended, receivers asked
		mu.Lock()
		defer mu.Unlock()
		return inFlight, mostInFlight, ended, len(asked)
	}
	tasksOnly := []string{"task.*"}
	for range 8 {
		rcv := httptest.NewServer(hang)
		t.Cleanup(rcv.Close)
		url := rcv.URL + "/hook"
		if _, err := svc.CreateWebhook(context.Background(), auth.Owner(env.pid), service.WebhookInput{URL: &url, Events: &tasksOnly}); err != nil {
			t.Fatal(err)
		}
	}
	released := false
	defer func() {
		if !released {
			close(release) // before the receivers close: their handlers must return
		}
	}()
	newTask(t, svc, env.pid, "for the eight")
	eventually(t, "four of the eight webhooks' requests in flight", func() bool { n, _, _, _ := counts(); return n >= 4 })

	other := newReceiver(t)
	createWebhook(t, svc, env.other, other, "task.*")
	newTask(t, svc, env.other, "for the other project")
	if got := other.waitFor(1); got[0].frame.ProjectID != env.other || got[0].frame.Type != service.EventTaskCreated {
		t.Fatalf("the other project's receiver got %s of %s", got[0].frame.Type, got[0].frame.ProjectID)
	}
	if n, most, ended, asked := counts(); n != 4 || most != 4 || ended != 0 || asked != 4 {
		t.Fatalf("when the other project's delivery arrived: %d in flight (at most %d), %d ended, %d of 8 receivers asked; want 4, 4, 0, 4",
			n, most, ended, asked)
	}

	released = true
	close(release)
	eventually(t, "all eight receivers asked", func() bool { _, _, _, asked := counts(); return asked == 8 })
	if _, most, _, _ := counts(); most > jobs.MaxProjectWebhookDeliveries {
		t.Fatalf("%d of one project's deliveries in flight at once, want at most %d", most, jobs.MaxProjectWebhookDeliveries)
	}
}

// A webhook made while the server allowed private addresses is refused at every
// connection once it does not: the name is resolved and checked when dialled, the
// attempt fails with the reason, and the receiver is never asked, so nothing of its
// answer comes back (neither in the delivery log nor from redeliver).
func TestWebhookPrivateAddressRefusedWhenDialled(t *testing.T) {
	pgtest.Engines(t, testWebhookPrivateAddressRefusedWhenDialled)
}

func testWebhookPrivateAddressRefusedWhenDialled(t *testing.T, engine string) {
	clock := jobstest.NewManualClock(testNow())
	dir := newSite(t, engine)
	srv := start(t, dir, clock) // private addresses allowed
	svc, pid := srv.Service, project(t, srv.Service)
	rcv := newReceiver(t)
	rcv.answer.Store(func(w http.ResponseWriter) int {
		io.WriteString(w, "db_password=hunter2")
		return http.StatusOK
	})
	url := strings.Replace(rcv.srv.URL, "127.0.0.1", "localhost", 1) + "/hook"
	hook, err := svc.CreateWebhook(context.Background(), auth.Owner(pid), service.WebhookInput{URL: &url})
	if err != nil {
		t.Fatalf("create webhook to %s while private addresses are allowed: %v", url, err)
	}
	rcv.secret.Store(hook.Secret)
	stop(t, srv)

	srv = startPublicOnly(t, dir, clock)
	defer stop(t, srv)
	svc = srv.Service
	newTask(t, svc, pid, "never sent to loopback")
	waitRetry(t, svc, pid, hook.ID, 1)
	refused := func(d model.WebhookDelivery) bool {
		return d.Status == nil && d.Response == "" && strings.HasPrefix(d.Error, "refused: ") &&
			strings.HasSuffix(d.Error, " is a loopback address; start the server with --webhooks-allow-private to allow it")
	}
	ds := deliveries(t, svc, pid, hook.ID)
	if len(ds) != 1 || !refused(ds[0]) {
		t.Fatalf("deliveries %+v, want one refused", ds)
	}
	d, err := svc.Redeliver(context.Background(), auth.Owner(pid), ds[0].ID)
	if err != nil || !refused(*d) {
		t.Fatalf("redeliver: %+v, %v; want refused", d, err)
	}
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
}
