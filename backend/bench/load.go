package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// loader sends the benchmark's requests. The timed ones go through raw, keep-alive
// HTTP/1.1 connections read and written on the caller's goroutine (rawhttp.go, and why);
// listing a project's task ids, which needs the Link header, goes through net/http.
type loader struct {
	base string // http://127.0.0.1:PORT
	raw  *rawClient
	http *http.Client
	// With -instances 2, the other server's URL and client: timed requests alternate
	// between the two (rawFor), and so do the fan-out's subscribers.
	others    []string
	otherRaws []*rawClient
	next      atomic.Uint64
	servers   []*server // every server of the run, for the machine figures (machine.go)
	postgres  bool      // the run is on PostgreSQL: the machine figures count its local processes
}

func newLoader(base string, others ...string) *loader {
	l := &loader{base: base, raw: newRawClient(base), http: &http.Client{Timeout: 30 * time.Second}, others: others}
	for _, o := range others {
		l.otherRaws = append(l.otherRaws, newRawClient(o))
	}
	return l
}

// rawFor is the client of the next request: the servers take turns.
func (l *loader) rawFor() *rawClient {
	if len(l.otherRaws) == 0 {
		return l.raw
	}
	n := l.next.Add(1) % uint64(1+len(l.otherRaws))
	if n == 0 {
		return l.raw
	}
	return l.otherRaws[n-1]
}

// baseOf is the URL of server i of them all (i taken modulo their number).
func (l *loader) baseOf(i int) string {
	if i %= 1 + len(l.others); i > 0 {
		return l.others[i-1]
	}
	return l.base
}

// statusError is an answer whose status is not the one expected.
type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.method, e.path, e.status, e.body)
}

// do sends one request with the bearer token, reads the whole answer and returns an
// error unless the status is want (a transport failure is an error too).
func (l *loader) do(method, path, token string, body []byte, want int) error {
	return l.send(method, path, http.Header{"Authorization": {"Bearer " + token}}, body, want)
}

// send is do with any credentials: the given headers go on the request.
func (l *loader) send(method, path string, header http.Header, body []byte, want int) error {
	status, snippet, err := l.rawFor().roundTrip(method, path, header, body, false)
	if err != nil {
		return err
	}
	if status != want {
		return &statusError{method, path, status, string(bytes.TrimSpace(snippet))}
	}
	return nil
}

// post sends a JSON body with the bearer token and decodes the answer into out.
func (l *loader) post(path, token string, body []byte, want int, out any) error {
	status, raw, err := l.rawFor().roundTrip("POST", path, http.Header{"Authorization": {"Bearer " + token}}, body, true)
	if err != nil {
		return err
	}
	if status != want {
		return &statusError{"POST", path, status, string(bytes.TrimSpace(raw[:min(len(raw), maxSnippet)]))}
	}
	return json.Unmarshal(raw, out)
}

// errorLog counts a phase's failed requests and keeps a few distinct messages.
type errorLog struct {
	n       atomic.Int64
	mu      sync.Mutex
	samples []string
}

func (e *errorLog) add(err error) {
	e.n.Add(1)
	msg := err.Error()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.samples) < 5 && !slices.Contains(e.samples, msg) {
		e.samples = append(e.samples, msg)
	}
}

// phase is the outcome of one timed phase.
type phase struct {
	ok, errors  int64
	errSamples  []string
	wall        time.Duration
	rps         float64    // successful requests per second
	loadgenCPU  float64    // this process's CPU time / wall time, in cores
	serverCPU   float64    // the server's CPU time / wall time, in cores
	maxRSSMiB   float64    // the server's largest VmRSS sampled during the phase
	machine     machineUse // throughput phases: the whole machine, per request
	p50, p99    float64    // latency phases: percentiles of the successful requests, ms
	latencyMean float64
}

// serverCPUPerRequest is the server's CPU time per successful request, in µs.
func (p phase) serverCPUPerRequest() float64 {
	if p.ok == 0 {
		return 0
	}
	return p.serverCPU * p.wall.Seconds() * 1e6 / float64(p.ok)
}

// throughput runs `clients` goroutines, each calling fn back to back, for d (or until
// ctx ends), and measures successful requests per second, both processes' CPU, and the
// server's resident memory (sampled every 100 ms).
func (l *loader) throughput(ctx context.Context, srv *server, clients int, d time.Duration, fn func() error) phase {
	var errs errorLog
	var ok atomic.Int64
	rss := sampleRSS(srv)
	selfBefore, serverBefore, machineBefore := selfCPU(), srv.cpu(), sampleMachine(l.servers, l.postgres)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				err := fn()
				if err == nil {
					ok.Add(1)
					continue
				}
				errs.add(err)
				if _, isStatus := errors.AsType[*statusError](err); !isStatus {
					time.Sleep(10 * time.Millisecond) // a dead server must not make us spin
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	machine, loadgen := sampleMachine(l.servers, l.postgres), selfCPU()-selfBefore
	p := phase{
		ok:         ok.Load(),
		errors:     errs.n.Load(),
		errSamples: errs.samples,
		wall:       wall,
		rps:        float64(ok.Load()) / wall.Seconds(),
		loadgenCPU: loadgen.Seconds() / wall.Seconds(),
		serverCPU:  (srv.cpu() - serverBefore).Seconds() / wall.Seconds(),
		machine:    machineBefore.use(machine, loadgen, ok.Load()),
	}
	p.maxRSSMiB = rss()
	return p
}

// sampleRSS samples the server's VmRSS every 100 ms until the returned function is
// called; that returns the largest value seen.
func sampleRSS(srv *server) func() float64 {
	stop := make(chan struct{})
	done := make(chan float64)
	go func() {
		var peak float64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, _, err := srv.memory(); err == nil {
				peak = max(peak, rss)
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 { close(stop); return <-done }
}

// latency makes warm sequential calls of fn, then n timed ones, from one client, and
// returns the percentiles of the successful ones in milliseconds.
func (l *loader) latency(ctx context.Context, warm, n int, fn func() error) phase {
	var errs errorLog
	for range warm {
		if ctx.Err() != nil {
			break
		}
		if err := fn(); err != nil {
			errs.add(err)
		}
	}
	ms := make([]float64, 0, n)
	start := time.Now()
	for range n {
		if ctx.Err() != nil {
			break
		}
		t := time.Now()
		err := fn()
		elapsed := time.Since(t)
		if err != nil {
			errs.add(err)
			continue
		}
		ms = append(ms, float64(elapsed.Nanoseconds())/1e6)
	}
	p := phase{ok: int64(len(ms)), errors: errs.n.Load(), errSamples: errs.samples, wall: time.Since(start)}
	if len(ms) > 0 {
		slices.Sort(ms)
		p.p50, p.p99 = percentile(ms, 0.50), percentile(ms, 0.99)
		var sum float64
		for _, v := range ms {
			sum += v
		}
		p.latencyMean = sum / float64(len(ms))
	}
	return p
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// times calls fn n times in all from `clients` goroutines; it returns how many failed
// and a few of their messages.
func times(ctx context.Context, clients, n int, fn func() error) (int64, []string) {
	var errs errorLog
	var next atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil && next.Add(1) <= int64(n) {
				if err := fn(); err != nil {
					errs.add(err)
				}
			}
		})
	}
	wg.Wait()
	return errs.n.Load(), errs.samples
}

var nextLink = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// taskIDs lists every task id of the token's project, 500 at a time (so that the
// listing itself does not inflate the server's peak memory), following Link rel="next".
func (l *loader) taskIDs(token string) ([]int64, error) {
	var ids []int64
	path := "/api/tasks?limit=500"
	for pages := 0; path != ""; pages++ {
		if pages > 10_000 {
			return nil, errors.New("GET /api/tasks: more than 10,000 pages")
		}
		req, err := http.NewRequest("GET", l.base+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := l.http.Do(req)
		if err != nil {
			return nil, err
		}
		var page []struct {
			ID int64 `json:"id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
		}
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		for _, t := range page {
			ids = append(ids, t.ID)
		}
		path = ""
		if m := nextLink.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
			next, err := url.Parse(m[1])
			if err != nil {
				return nil, fmt.Errorf("GET /api/tasks: bad Link %q", m[1])
			}
			path = next.RequestURI()
		}
	}
	return ids, nil
}

// fill makes the token's project hold exactly want tasks, creating the missing ones
// with `clients` concurrent clients (failed creates are retried, three passes at most),
// and returns their ids.
func (l *loader) fill(ctx context.Context, p project, want, clients int, body func() []byte) ([]int64, int, error) {
	created := 0
	for pass := 0; ; pass++ {
		ids, err := l.taskIDs(p.token)
		if err != nil {
			return nil, created, err
		}
		missing := want - len(ids)
		switch {
		case missing == 0:
			return ids, created, nil
		case missing < 0:
			return nil, created, fmt.Errorf("the read project holds %d tasks, more than %d", len(ids), want)
		case ctx.Err() != nil:
			return nil, created, ctx.Err()
		case pass == 3:
			return nil, created, fmt.Errorf("the read project holds %d tasks after %d passes, want %d", len(ids), pass, want)
		}
		failed, samples := times(ctx, clients, missing, func() error {
			return l.do("POST", "/api/tasks", p.token, body(), http.StatusCreated)
		})
		created += missing - int(failed)
		if failed > 0 {
			logf("  %d of %d creates failed while filling the read project, e.g. %s", failed, missing, samples[0])
		}
	}
}

// createBody is a create request like an agent's: summary, details, three steps and an
// assigned agent. Every summary differs.
func createBody(seq *atomic.Int64, agent int64) func() []byte {
	return func() []byte {
		return fmt.Appendf(nil, `{"summary":"benchmark task %d","details":"created by the load benchmark to measure the create path","steps":[{"title":"read the issue"},{"title":"write the fix"},{"title":"run the tests"}],"agent_id":%d}`, seq.Add(1), agent)
	}
}

// getPath is GET /api/tasks/{id} of a random id among ids.
func getPath(ids []int64, rnd func(int) int) string {
	return "/api/tasks/" + strconv.FormatInt(ids[rnd(len(ids))], 10)
}
