package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// scrape reads the metrics endpoint into series -> value, where a series is written as
// in the exposition: name{label="value",...}.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %d", resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
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

// --metrics-addr serves the series docs/metrics.md lists, and they move with the work:
// requests by route template, the writer's batches, the event subscribers, the
// background work, the scheduled jobs' runs and the webhook deliveries with their lag.
func TestMetrics(t *testing.T) {
	env := testenv.StartWith(t, server.Config{MetricsAddr: "127.0.0.1:0", WebhooksAllowPrivate: true}) // webhooks to loopback receivers
	murl := env.Server.MetricsURL()
	if murl == "" || strings.Contains(murl, strings.TrimPrefix(env.URL, "http://")) {
		t.Fatalf("metrics URL %q, main %q: want a listener of their own", murl, env.URL)
	}
	pid := env.Project.ID
	tok := env.Token(t, pid, "task:read", "task:write")
	before := scrape(t, murl)

	// Requests: counted by route template, never by the raw path.
	for i := range 3 {
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: map[string]any{"summary": fmt.Sprint("task ", i)}})
		if r.Status != http.StatusCreated {
			t.Fatalf("create task: %d %s", r.Status, r.Body)
		}
		var task struct{ ID int64 }
		r.JSON(t, &task)
		if r := env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprint("/api/tasks/", task.ID), Token: tok}); r.Status != 200 {
			t.Fatalf("get task: %d", r.Status)
		}
	}
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/no-such-thing/42", Token: tok})
	env.Do(t, testenv.Request{Method: "BREW", Path: "/api/tasks", Token: tok}) // any method: not a label of its own
	got := scrape(t, murl)
	delta := func(series string) float64 { return got[series] - before[series] }
	for series, want := range map[string]float64{
		`agentdesk_http_requests_total{method="GET",route="/api/tasks/:id",status="2xx"}`:    3,
		`agentdesk_http_requests_total{method="POST",route="/api/tasks",status="2xx"}`:       3,
		`agentdesk_http_requests_total{method="GET",route="unmatched",status="4xx"}`:         1,
		`agentdesk_http_requests_total{method="other",route="unmatched",status="4xx"}`:       1,
		`agentdesk_http_request_duration_seconds_count{method="GET",route="/api/tasks/:id"}`: 3,
	} {
		if d := delta(series); d != want {
			t.Errorf("%s moved by %v, want %v", series, d, want)
		}
	}
	for series := range got {
		if strings.Contains(series, "no-such-thing") || strings.Contains(series, "BREW") || strings.Contains(series, `route="/api/tasks/1"`) {
			t.Errorf("a raw path became a label: %s", series)
		}
	}
	// The writer: three creates committed in one or more batches.
	if d := delta("agentdesk_writer_batch_writes_sum"); d < 3 {
		t.Errorf("batch writes sum moved by %v, want at least 3", d)
	}
	if d := delta("agentdesk_writer_commit_duration_seconds_count"); d < 1 {
		t.Errorf("commit duration count moved by %v, want at least 1", d)
	}
	if _, ok := got["agentdesk_writer_queue_depth"]; !ok {
		t.Error("no agentdesk_writer_queue_depth")
	}

	// The main port does not serve them.
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/metrics"}); strings.Contains(string(r.Body), "agentdesk_http_requests_total") {
		t.Fatalf("the main port served the metrics: %d", r.Status)
	}

	// Event subscribers: a stream open is counted, and uncounted once closed.
	ws := strings.Replace(env.URL, "http://", "ws://", 1) + "/api/events?access_token=" + tok
	conn, _, err := websocket.DefaultDialer.Dial(ws, nil)
	if err != nil {
		t.Fatalf("dial events: %v", err)
	}
	eventually(t, "one event subscriber", func() bool { return scrape(t, murl)["agentdesk_event_subscribers"] == 1 })
	conn.Close()
	eventually(t, "no event subscriber", func() bool { return scrape(t, murl)["agentdesk_event_subscribers"] == 0 })
	if _, ok := got["agentdesk_event_replays_in_progress"]; !ok {
		t.Error("no agentdesk_event_replays_in_progress")
	}
	if got[`agentdesk_http_requests_total{method="GET",route="/api/events",status="1xx"}`] != 0 {
		t.Log("upgrade counted as 1xx") // either class is fine; the route is what matters
	}

	// Background work: the activity trail is filled every second.
	eventually(t, "a pass of the background work", func() bool {
		return scrape(t, murl)[`agentdesk_background_runs_total{outcome="ok",work="fill the activity trail"}`] > 0
	})

	// A scheduled job run by hand: its outcome is counted.
	ctx := context.Background()
	owner := auth.Owner(pid)
	name, cron, summary := "nightly", "0 3 * * *", "check the backups"
	job, err := env.Service.CreateJob(ctx, owner, service.JobInput{Name: &name, Cron: &cron, Summary: &summary})
	if err != nil {
		t.Fatalf("create job: %v", err)
	}
	createdBefore := scrape(t, murl)[`agentdesk_job_runs_total{outcome="created"}`]
	if _, err := env.Service.RunJobNow(ctx, owner, job.ID); err != nil {
		t.Fatalf("run job: %v", err)
	}
	if got := scrape(t, murl)[`agentdesk_job_runs_total{outcome="created"}`]; got != createdBefore+1 {
		t.Errorf("job runs created: %v, want %v", got, createdBefore+1)
	}

	// Webhook deliveries: a success, then a receiver that fails leaves an event
	// undelivered, so the lag is above zero; once it answers again the lag is back to 0.
	var status atomic.Int64
	status.Store(http.StatusOK)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(int(status.Load()))
	}))
	defer rcv.Close()
	hookURL := rcv.URL + "/hook"
	events := []string{"task.created"}
	if _, err := env.Service.CreateWebhook(ctx, owner, service.WebhookInput{URL: &hookURL, Events: &events}); err != nil {
		t.Fatalf("create webhook: %v", err)
	}
	base := scrape(t, murl)
	createTask := func(s string) {
		if _, err := env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: s}, ""); err != nil {
			t.Fatal(err)
		}
	}
	createTask("delivered")
	eventually(t, "a successful delivery", func() bool {
		m := scrape(t, murl)
		return m[`agentdesk_webhook_deliveries_total{outcome="success"}`] > base[`agentdesk_webhook_deliveries_total{outcome="success"}`] &&
			m["agentdesk_webhook_delivery_lag_seconds"] == 0
	})
	status.Store(http.StatusInternalServerError)
	createTask("refused")
	eventually(t, "a failed delivery and a lag", func() bool {
		m := scrape(t, murl)
		return m[`agentdesk_webhook_deliveries_total{outcome="failure"}`] == base[`agentdesk_webhook_deliveries_total{outcome="failure"}`]+1 &&
			m["agentdesk_webhook_delivery_lag_seconds"] > 0
	})
	if got := scrape(t, murl)["agentdesk_webhook_delivery_duration_seconds_count"]; got < 2 {
		t.Errorf("delivery durations observed: %v, want at least 2", got)
	}

	// Every expression of the Grafana dashboard names series this server exports.
	checkDashboard(t, scrape(t, murl))
}

// checkDashboard parses docs/grafana/agentdesk.json and checks each panel's queries.
func checkDashboard(t *testing.T, exported map[string]float64) {
	t.Helper()
	names := map[string]bool{}
	for series := range exported {
		name, _, _ := strings.Cut(series, "{")
		names[name] = true
	}
	raw, err := os.ReadFile("../../docs/grafana/agentdesk.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("docs/grafana/agentdesk.json: %v", err)
	}
	if len(dash.Panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	metricName := regexp.MustCompile(`\b(?:agentdesk|go|process)_[a-z_]+\b`)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			found := metricName.FindAllString(target.Expr, -1)
			if len(found) == 0 {
				t.Errorf("panel %q: %q names no series", p.Title, target.Expr)
			}
			for _, n := range found {
				if !names[n] {
					t.Errorf("panel %q: %s is not exported", p.Title, n)
				}
			}
		}
	}
}

// Without --metrics-addr there is no metrics listener.
func TestMetricsOffByDefault(t *testing.T) {
	env := testenv.Start(t)
	if u := env.Server.MetricsURL(); u != "" {
		t.Fatalf("metrics served at %s without --metrics-addr", u)
	}
}
