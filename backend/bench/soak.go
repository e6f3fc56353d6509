package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// The soak (make soak DURATION=1h): the bench's mix of requests at a steady rate for a
// long time, with stream subscribers and the reference agent at work, to show what a
// short run cannot: memory that creeps, latency that drifts, a socket that drops. Every
// minute it prints the requests, errors, p50/p99 and the server's RSS; at the end one
// JSON line, and whether the run passed:
//
//   - no errors (requests, subscribers, the agent);
//   - RSS flat after the warm-up: less than 10% growth from the end of the first sixth
//     of the run (minute 10 of an hour) to the end;
//   - p99 of the last sixth (the last 10 minutes of an hour) within 1.5× of the p99 of
//     the twelfth to the quarter of the run (minutes 5 to 15 of an hour).

type soakConfig struct {
	duration    time.Duration
	rate        int // requests per second, all kinds together
	subscribers int
}

// soakMinute is what one minute (or, for short runs, one sixtieth) of the soak saw.
type soakMinute struct {
	Minute   int     `json:"minute"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	RSSMiB   float64 `json:"rss_mib"`
	Events   int64   `json:"events_received"`
}

// soakRecorder gathers the current interval's latencies and errors.
type soakRecorder struct {
	mu      sync.Mutex
	lat     []float64
	errors  int
	samples []string
}

func (r *soakRecorder) done(start time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errors++
		if len(r.samples) < 5 && !slices.Contains(r.samples, err.Error()) {
			r.samples = append(r.samples, err.Error())
		}
		return
	}
	r.lat = append(r.lat, float64(time.Since(start).Microseconds())/1000)
}

func (r *soakRecorder) take() (lat []float64, errors int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lat, errors, r.lat, r.errors = r.lat, r.errors, nil, 0
	return lat, errors
}

func runSoak(ctx context.Context, cfg config, sc soakConfig) int {
	dir, done, err := dataDir(cfg, "agentdesk-soak-")
	if err != nil {
		logf("soak: %v", err)
		return 1
	}
	defer done()
	fail := func(err error) int {
		logf("soak: %v", err)
		return 1
	}
	srv := &server{bin: cfg.bin, dir: dir, db: cfg.db}
	p, err := srv.newProject("soak")
	if err != nil {
		return fail(err)
	}
	raiseFileLimit()
	if err := srv.start(ctx, cfg.synchronous); err != nil {
		return fail(err)
	}
	defer srv.stop()
	l := newLoader(srv.url())
	logf("soak: agentdesk %s on %s for %s: %d requests/s (creates, lists, gets, messages, callbacks, answers), %d stream subscribers, the reference agent",
		cfg.bin, srv.url(), sc.duration, sc.rate, sc.subscribers)

	// The reference agent works on the tasks assigned to it.
	agent, err := startAgent(ctx, srv, p)
	if err != nil {
		return fail(err)
	}
	defer agent.cmd.Process.Kill()

	// Stream subscribers: every one must stay connected to the end.
	streamTokens, err := srv.streamTokens(p, sc.subscribers)
	if err != nil {
		return fail(err)
	}
	var events atomic.Int64
	subsDone := make(chan error, sc.subscribers)
	subCtx, stopSubs := context.WithCancel(ctx)
	defer stopSubs()
	for i := range sc.subscribers {
		conn, _, err := websocket.DefaultDialer.Dial(strings.Replace(srv.url(), "http://", "ws://", 1)+"/api/events",
			http.Header{"Authorization": {"Bearer " + streamTokens[i*len(streamTokens)/sc.subscribers]}})
		if err != nil {
			return fail(fmt.Errorf("subscriber %d: %w", i, err))
		}
		go func() {
			go func() { <-subCtx.Done(); conn.Close() }()
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					if subCtx.Err() != nil {
						subsDone <- nil
					} else {
						subsDone <- fmt.Errorf("a subscriber lost its stream: %w", err)
					}
					return
				}
				events.Add(1)
			}
		}()
	}

	var conv struct{ ID int64 }
	if err := l.post("/api/projects/"+p.id+"/conversations", p.token, []byte(`{"message":"soak","name":"soak"}`), http.StatusCreated, &conv); err != nil {
		return fail(err)
	}
	messages := fmt.Sprintf("/api/projects/%s/conversations/%d/messages", p.id, conv.ID)
	// Tasks of the loader's own "agent" calls (the reference agent works on others).
	var mine []int64
	for range 16 {
		var t struct{ ID int64 }
		if err := l.post("/api/tasks", p.token, []byte(`{"summary":"soak callbacks","steps":[{"title":"a"},{"title":"b"},{"title":"c"}]}`), http.StatusCreated, &t); err != nil {
			return fail(err)
		}
		mine = append(mine, t.ID)
	}
	if err := l.do("PUT", fmt.Sprintf("/api/tasks/%d/agent", mine[0]), p.token, fmt.Appendf(nil, `{"agent_id":%d}`, p.agent), http.StatusOK); err != nil {
		return fail(err)
	}
	var seq atomic.Int64
	var lastID atomic.Int64 // the newest task, for gets of any task so far
	lastID.Store(mine[len(mine)-1])

	// The mix, by weight: what a team's server sees, writes and reads.
	type kind struct {
		weight int
		do     func() error
	}
	mix := []kind{
		{2, func() error { // a task for the reference agent; every tenth asks a question at its last step
			n := seq.Add(1)
			last := "Report"
			if n%10 == 0 {
				last = "Which colour?"
			}
			var t struct{ ID int64 }
			err := l.post("/api/tasks", p.token, fmt.Appendf(nil, `{"summary":"soak %d","steps":[{"title":"Look"},{"title":%q}],"agent_id":%d}`, n, last, p.agent), http.StatusCreated, &t)
			if err == nil {
				lastID.Store(max(lastID.Load(), t.ID))
			}
			return err
		}},
		{3, func() error { return l.do("GET", "/api/tasks?limit=50&status=Todo", p.token, nil, http.StatusOK) }},
		{3, func() error {
			return l.do("GET", "/api/tasks/"+strconv.FormatInt(1+rand.Int64N(lastID.Load()), 10), p.token, nil, http.StatusOK)
		}},
		{1, func() error {
			return l.do("POST", messages, p.token, fmt.Appendf(nil, `{"message":"soak message %d"}`, seq.Add(1)), http.StatusCreated)
		}},
		{1, func() error {
			n := seq.Add(1)
			body := fmt.Appendf(nil, `{"project_id":%q,"status":"Doing","steps":[{"index":%d,"status":%q}]}`, p.id, n%3, [2]string{"in_progress", "completed"}[n%2])
			return l.send("POST", fmt.Sprintf("/api/agent_callback/%d", mine[0]), p.agentAuth, body, http.StatusOK)
		}},
	}
	var weights []func() error
	for _, k := range mix {
		for range k.weight {
			weights = append(weights, k.do)
		}
	}

	rec := &soakRecorder{}
	loadCtx, stopLoad := context.WithTimeout(ctx, sc.duration)
	defer stopLoad()
	var wg sync.WaitGroup
	const clients = 16
	interval := time.Duration(float64(time.Second) * clients / float64(sc.rate)) // each client's pace
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for i := c; ; i++ {
				select {
				case <-loadCtx.Done():
					return
				case <-tick.C:
				}
				start := time.Now()
				rec.done(start, weights[i%len(weights)]())
			}
		}()
	}
	// One client answers the agent's questions, as a person in the Inbox would.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-time.After(time.Second):
			}
			var waiting []struct {
				ID             int64 `json:"id"`
				WaitingVersion int64 `json:"waiting_version"`
			}
			start := time.Now()
			status, body, err := l.raw.roundTrip("GET", "/api/tasks?status=Waiting&limit=20", http.Header{"Authorization": {"Bearer " + p.token}}, nil, true)
			if err == nil && status != http.StatusOK {
				err = &statusError{"GET", "/api/tasks?status=Waiting", status, string(body)}
			}
			if err == nil {
				err = json.Unmarshal(body, &waiting)
			}
			rec.done(start, err)
			for _, t := range waiting {
				start := time.Now()
				err := l.do("POST", fmt.Sprintf("/api/tasks/%d/respond", t.ID), p.token,
					fmt.Appendf(nil, `{"response":"Blue","waiting_version":%d}`, t.WaitingVersion), http.StatusOK)
				rec.done(start, err)
			}
		}
	}()

	// Every sixtieth of the run (a minute of an hour): what it saw.
	step := sc.duration / 60
	var minutes []soakMinute
	tick := time.NewTicker(step)
	for m := 1; m <= 60; m++ {
		select {
		case <-ctx.Done():
			tick.Stop()
			return fail(ctx.Err())
		case <-tick.C:
		}
		lat, errs := rec.take()
		slices.Sort(lat)
		rss, _, _ := srv.memory()
		sm := soakMinute{Minute: m, Requests: len(lat), Errors: errs, RSSMiB: round(rss, 1), Events: events.Load()}
		if len(lat) > 0 {
			sm.P50Ms, sm.P99Ms = round(percentile(lat, 0.5), 3), round(percentile(lat, 0.99), 3)
		}
		minutes = append(minutes, sm)
		logf("  %2d/60  %6d requests  %d errors  p50 %.2f ms  p99 %.2f ms  RSS %.1f MiB  %d events delivered",
			m, sm.Requests, sm.Errors, sm.P50Ms, sm.P99Ms, sm.RSSMiB, sm.Events)
	}
	tick.Stop()
	stopLoad()
	wg.Wait()
	stopSubs()
	var subErrors []string
	for range sc.subscribers {
		if err := <-subsDone; err != nil {
			subErrors = append(subErrors, err.Error())
		}
	}
	agentAlive := true
	select {
	case <-agent.exited:
		agentAlive = false
	default:
	}
	rec.mu.Lock()
	samples := rec.samples
	rec.mu.Unlock()
	return soakVerdict(cfg, sc, minutes, samples, subErrors, agentAlive, agent.output())
}

// soakVerdict prints the JSON line and says whether the run passed.
func soakVerdict(cfg config, sc soakConfig, minutes []soakMinute, samples, subErrors []string, agentAlive bool, agentOutput string) int {
	errors := 0
	for _, m := range minutes {
		errors += m.Errors
	}
	at := func(m int) soakMinute { return minutes[m-1] }
	p99Of := func(from, to int) float64 { // the median of the minutes' p99s, a steadier figure than one minute's
		var v []float64
		for m := from; m <= to; m++ {
			v = append(v, at(m).P99Ms)
		}
		return median(v)
	}
	rssGrowth := (at(60).RSSMiB - at(10).RSSMiB) / at(10).RSSMiB
	early, late := p99Of(5, 15), p99Of(51, 60)
	checks := map[string]bool{
		"no_errors":   errors == 0 && len(subErrors) == 0 && agentAlive,
		"rss_flat":    rssGrowth < 0.10,
		"p99_steady":  late <= 1.5*early,
		"subscribers": len(subErrors) == 0,
	}
	passed := checks["no_errors"] && checks["rss_flat"] && checks["p99_steady"]
	out := map[string]any{
		"soak_duration_s":          sc.duration.Seconds(),
		"rate_per_s":               sc.rate,
		"subscribers":              sc.subscribers,
		"errors":                   errors,
		"subscriber_errors":        len(subErrors),
		"agent_ran_to_the_end":     agentAlive,
		"rss_minute10_mib":         at(10).RSSMiB,
		"rss_end_mib":              at(60).RSSMiB,
		"rss_growth_after_warm_up": round(rssGrowth, 4),
		"p99_minutes5to15_ms":      round(early, 3),
		"p99_last10_ms":            round(late, 3),
		"checks":                   checks,
		"passed":                   passed,
		"minutes":                  minutes,
	}
	for _, s := range append(samples, subErrors...) {
		logf("  error: %s", s)
	}
	if !agentAlive {
		logf("  the reference agent stopped; its output ends:\n%s", agentOutput)
	}
	logf("soak: errors %d; RSS %.1f MiB at minute 10, %.1f at the end (%+.1f%%); p99 %.2f ms in minutes 5-15, %.2f in the last 10; %s",
		errors, at(10).RSSMiB, at(60).RSSMiB, rssGrowth*100, early, late, map[bool]string{true: "PASSED", false: "FAILED"}[passed])
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
	if cfg.jsonOut != "" {
		_ = os.WriteFile(cfg.jsonOut, append(line, '\n'), 0o644)
	}
	if !passed {
		return 1
	}
	return 0
}

// referenceAgent is `agentdesk agent run` for the soak project's worker.
type referenceAgent struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when it ends
	mu     sync.Mutex
	out    []byte // its output, the last 64 KiB
}

func (a *referenceAgent) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.out = append(a.out, p...)
	if len(a.out) > 64<<10 {
		a.out = a.out[len(a.out)-64<<10:]
	}
	return len(p), nil
}

func (a *referenceAgent) output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return string(a.out[max(0, len(a.out)-2000):])
}

// startAgent runs `agentdesk agent run` for the project's worker, with the environment
// `agentdesk agent env` prints.
func startAgent(ctx context.Context, srv *server, p project) (*referenceAgent, error) {
	env, err := srv.cli("agent", "env", "--project", p.id, "--name", "worker", "--url", srv.url())
	if err != nil {
		return nil, err
	}
	a := &referenceAgent{exited: make(chan struct{})}
	a.cmd = exec.CommandContext(ctx, srv.bin, "agent", "run", "--name", "worker", "--poll", "500ms", "--pause", "50ms")
	a.cmd.Env = os.Environ()
	for line := range strings.Lines(string(env)) {
		if k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "export "), "="); ok {
			a.cmd.Env = append(a.cmd.Env, k+"="+v)
		}
	}
	a.cmd.Stdout, a.cmd.Stderr = a, a
	if err := a.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { a.cmd.Wait(); close(a.exited) }()
	return a, nil
}
