// Command bench is agentdesk's load benchmark (`make bench`). It runs the real server
// binary as a child process on loopback with a fresh data directory, drives it over HTTP
// with concurrent keep-alive clients, and prints a table to stderr and one JSON line of
// named figures (medians over rounds) to stdout.
//
//	go run ./backend/bench -bin bin/agentdesk [-rounds 3] [-duration 5s] [-json-out FILE]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/agentdesk", "agentdesk binary to measure")
	rounds := flag.Int("rounds", 3, "rounds per figure; the median is reported")
	duration := flag.Duration("duration", 5*time.Second, "length of each throughput phase")
	clients := flag.Int("clients", 16, "concurrent clients of the throughput phases")
	seed := flag.Int("tasks", 10_000, "tasks in the project the reads run against")
	jsonOut := flag.String("json-out", "", "also write the JSON line to this file")
	synchronous := flag.String("synchronous", "full", "the server's --synchronous (full or normal)")
	flag.IntVar(&subscribers, "subscribers", 1000, "WebSocket subscribers of the fan-out phase (0 skips it)")
	flag.Parse()
	serverSync = *synchronous
	if err := run(*bin, *rounds, *duration, *clients, *seed, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// serverSync is the server's --synchronous; subscribers sizes the fan-out phase.
var (
	serverSync  = "full"
	subscribers = 1000
)

type bench struct {
	bin, data, url string
	server         *exec.Cmd
	http           *http.Client
}

func run(bin string, rounds int, duration time.Duration, clients, seed int, jsonOut string) error {
	data, err := os.MkdirTemp("", "agentdesk-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	b := &bench{bin: bin, data: data, http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute},
	}}

	// Two projects: creates grow one; reads run against the other, held at seed tasks.
	writeProject, writeToken, agentID, err := b.project("writes")
	if err != nil {
		return err
	}
	_, readToken, readAgent, err := b.project("reads")
	if err != nil {
		return err
	}
	raiseFileLimit()
	if err := b.start(); err != nil {
		return err
	}
	defer b.stop()
	_ = writeProject

	createBody := func(i int, agent int64) []byte {
		return fmt.Appendf(nil, `{"summary":"benchmark task %d","details":"created by the load benchmark","steps":[{"title":"one"},{"title":"two?"},{"title":"three"}],"agent_id":%d}`, i, agent)
	}
	logf("seeding %d tasks for the read phases…", seed)
	var seq atomic.Int64
	if _, err := b.load(clients, 0, int64(seed), func(c *http.Client) (int, error) {
		i := seq.Add(1)
		return b.do(c, "POST", "/api/tasks", readToken, createBody(int(i), readAgent), 201)
	}); err != nil {
		return err
	}
	var ids []int64
	if err := b.getJSON("/api/tasks", readToken, &ids); err != nil {
		return err
	}
	if len(ids) != seed {
		return fmt.Errorf("read project has %d tasks, want %d", len(ids), seed)
	}

	figures := map[string][]float64{}
	add := func(name string, v float64) { figures[name] = append(figures[name], v) }
	for r := 1; r <= rounds; r++ {
		logf("round %d of %d", r, rounds)
		res, err := b.load(clients, duration, 0, func(c *http.Client) (int, error) {
			return b.do(c, "POST", "/api/tasks", writeToken, createBody(int(seq.Add(1)), agentID), 201)
		})
		if err != nil {
			return err
		}
		add("creates_per_s", res.rps)
		add("loadgen_cpu_share_creates", res.loadgenCPU)
		add("server_cpu_share_creates", res.serverCPU)
		logf("  creates, %d clients: %8.0f /s   (loadgen %.0f%% of a core, server %.0f%%)", clients, res.rps, 100*res.loadgenCPU, 100*res.serverCPU)

		lat, err := b.latency(2000, func(c *http.Client) (int, error) {
			return b.do(c, "GET", "/api/tasks?limit=50", readToken, nil, 200)
		})
		if err != nil {
			return err
		}
		add("list50_p50_ms", lat.p50)
		add("list50_p99_ms", lat.p99)
		logf("  GET /api/tasks?limit=50, 1 client: p50 %.3f ms  p99 %.3f ms", lat.p50, lat.p99)
		res, err = b.load(clients, duration, 0, func(c *http.Client) (int, error) {
			return b.do(c, "GET", "/api/tasks?limit=50", readToken, nil, 200)
		})
		if err != nil {
			return err
		}
		add("list50_rps", res.rps)
		add("loadgen_cpu_share_list50", res.loadgenCPU)
		logf("  GET /api/tasks?limit=50, %d clients: %8.0f /s   (loadgen %.0f%%, server %.0f%%)", clients, res.rps, 100*res.loadgenCPU, 100*res.serverCPU)

		randomGet := func(c *http.Client) (int, error) {
			return b.do(c, "GET", "/api/tasks/"+strconv.FormatInt(ids[rand.IntN(len(ids))], 10), readToken, nil, 200)
		}
		lat, err = b.latency(2000, randomGet)
		if err != nil {
			return err
		}
		add("get_p50_ms", lat.p50)
		add("get_p99_ms", lat.p99)
		res, err = b.load(clients, duration, 0, randomGet)
		if err != nil {
			return err
		}
		add("get_rps", res.rps)
		add("loadgen_cpu_share_get", res.loadgenCPU)
		logf("  GET /api/tasks/{id}: p50 %.3f ms, %d clients: %8.0f /s   (loadgen %.0f%%, server %.0f%%)", lat.p50, clients, res.rps, 100*res.loadgenCPU, 100*res.serverCPU)
	}
	if subscribers > 0 {
		_, fanToken, _, err := b.project("fan-out")
		if err != nil {
			return err
		}
		for r := 1; r <= rounds; r++ {
			p50, p99, err := b.fanout(subscribers, 100, 50, fanToken)
			if err != nil {
				return err
			}
			add("fanout_p50_ms", p50)
			add("fanout_p99_ms", p99)
			logf("  fan-out to %d subscribers, 100 events at 50/s: p50 %.2f ms  p99 %.2f ms", subscribers, p50, p99)
		}
	}
	peak, err := b.peakRSS()
	if err != nil {
		return err
	}
	logf("server peak RSS: %.1f MiB", peak)

	out := map[string]any{"synchronous": serverSync, "rounds": rounds, "clients": clients, "tasks": seed, "cores": runtime.NumCPU(), "peak_rss_mib": round(peak, 1)}
	names := make([]string, 0, len(figures))
	for k := range figures {
		names = append(names, k)
	}
	slices.Sort(names)
	logf("\n%-28s %12s   rounds", "figure", "median")
	for _, k := range names {
		med := median(figures[k])
		out[k] = round(med, 3)
		logf("%-28s %12.3f   %v", k, med, roundAll(figures[k]))
	}
	if err := b.stop(); err != nil {
		return err
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
	if jsonOut != "" {
		return os.WriteFile(jsonOut, append(line, '\n'), 0o644)
	}
	return nil
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// project creates a project, a token with the task scopes and an agent, with the CLI.
func (b *bench) project(name string) (id, token string, agent int64, err error) {
	out, err := b.cli("project", "create", "--name", name)
	if err != nil {
		return "", "", 0, err
	}
	var p struct{ ID string }
	if err := json.Unmarshal(out, &p); err != nil {
		return "", "", 0, fmt.Errorf("project create printed %q", out)
	}
	tok, err := b.cli("token", "create", "--project", p.ID, "--name", "bench", "--scopes", "task:read,task:write")
	if err != nil {
		return "", "", 0, err
	}
	out, err = b.cli("agent", "create", "--project", p.ID, "--name", "worker")
	if err != nil {
		return "", "", 0, err
	}
	var a struct{ ID int64 }
	json.Unmarshal(out, &a)
	return p.ID, strings.TrimSpace(string(tok)), a.ID, nil
}

func (b *bench) cli(args ...string) ([]byte, error) {
	cmd := exec.Command(b.bin, append(args, "--data", b.data)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("agentdesk %v: %v: %s", args, err, stderr.String())
	}
	return out, nil
}

// start runs the server on a free loopback port and waits for its URL.
func (b *bench) start() error {
	b.server = exec.Command(b.bin, "--serve", "--addr", "127.0.0.1:0", "--data", b.data, "--synchronous", serverSync)
	stderr, err := b.server.StderrPipe()
	if err != nil {
		return err
	}
	if err := b.server.Start(); err != nil {
		return err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`url=(http://\S+)`)
		for sc.Scan() { // the request log is read and dropped, as a log collector would
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case b.url = <-found:
		return nil
	case <-time.After(30 * time.Second):
		b.server.Process.Kill()
		return fmt.Errorf("server did not start")
	}
}

func (b *bench) stop() error {
	if b.server == nil || b.server.ProcessState != nil {
		return nil
	}
	b.server.Process.Signal(syscall.SIGTERM)
	if err := b.server.Wait(); err != nil {
		return fmt.Errorf("server did not stop cleanly: %w", err)
	}
	return nil
}

// do sends one request and reads the whole answer; a status other than want is an error.
func (b *bench) do(c *http.Client, method, path, token string, body []byte, want int) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, b.url+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return int(n), fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
	}
	return int(n), nil
}

func (b *bench) getJSON(path, token string, ids *[]int64) error {
	req, _ := http.NewRequest("GET", b.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var tasks []struct{ ID int64 }
	if err := json.NewDecoder(resp.Body).Decode(&tasks); err != nil {
		return err
	}
	for _, t := range tasks {
		*ids = append(*ids, t.ID)
	}
	return nil
}

type loadResult struct {
	rps                   float64
	loadgenCPU, serverCPU float64 // shares of one core over the phase
}

// load runs clients goroutines calling fn until duration has passed, or until count
// calls were made in all (count > 0). Any failed call fails the phase.
func (b *bench) load(clients int, duration time.Duration, count int64, fn func(*http.Client) (int, error)) (loadResult, error) {
	var done atomic.Int64
	var failure atomic.Value
	deadline := time.Now().Add(duration)
	selfBefore, serverBefore := selfCPU(), b.serverCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failure.Load() == nil {
				if count > 0 {
					if done.Add(1) > count {
						return
					}
				} else if time.Now().After(deadline) {
					return
				} else {
					done.Add(1)
				}
				if _, err := fn(b.http); err != nil {
					failure.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failure.Load().(error); err != nil {
		return loadResult{}, err
	}
	n := done.Load()
	if count > 0 {
		n = count
	}
	wall := elapsed.Seconds()
	return loadResult{
		rps:        float64(n) / wall,
		loadgenCPU: (selfCPU() - selfBefore).Seconds() / wall,
		serverCPU:  (b.serverCPU() - serverBefore).Seconds() / wall,
	}, nil
}

type latencies struct{ p50, p99 float64 }

// latency makes n sequential calls (after a warm-up) and returns the percentiles in ms.
func (b *bench) latency(n int, fn func(*http.Client) (int, error)) (latencies, error) {
	for range 200 {
		if _, err := fn(b.http); err != nil {
			return latencies{}, err
		}
	}
	ms := make([]float64, n)
	for i := range ms {
		t := time.Now()
		if _, err := fn(b.http); err != nil {
			return latencies{}, err
		}
		ms[i] = float64(time.Since(t).Nanoseconds()) / 1e6
	}
	slices.Sort(ms)
	return latencies{p50: ms[n/2], p99: ms[n*99/100]}, nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU reads the server's user+system CPU time from /proc (clock ticks of 10 ms).
func (b *bench) serverCPU() time.Duration {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(b.server.Process.Pid), "stat"))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// peakRSS is the server's high-water resident set (VmHWM) in MiB.
func (b *bench) peakRSS() (float64, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(b.server.Process.Pid), "status"))
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(raw)
	if m == nil {
		return 0, fmt.Errorf("no VmHWM in /proc status")
	}
	kb, _ := strconv.ParseFloat(string(m[1]), 64)
	return kb / 1024, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

func roundAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = round(x, 3)
	}
	return out
}
