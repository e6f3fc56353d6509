// Command bench is agentdesk's load benchmark, the program behind `make bench`:
//
//	go run ./backend/bench -bin bin/agentdesk [-rounds 3] [-duration 5s] [-json-out FILE]
//
// It makes a temporary data directory, creates projects, tokens (task:read,task:write)
// and agents there with the binary's command line, then starts the real server as a
// child process (`agentdesk --serve --addr 127.0.0.1:PORT --data DIR`, its log in
// DIR/server.log) and waits for GET /healthz. All traffic goes over loopback HTTP/1.1
// keep-alive connections, one per concurrent client, written and read by a minimal client
// on the caller's goroutine (rawhttp.go), so that the load generator takes as little as
// possible of the cores it shares with the server.
//
// Each round measures, in this order:
//
//   - creates: POST /api/tasks (summary, details, three steps, an assigned agent; 201
//     expected) from -clients concurrent clients for -duration, into project
//     "bench-writes";
//   - the floor's creates: the same creates, as many clients, as long, against the
//     floor server (floor.go), a minimal server of the bench's own that does what a
//     create needs and no more (-floor=false leaves it out); odd rounds time agentdesk
//     first, even rounds the floor. creates_share_of_floor is agentdesk's creates per
//     second over the floor's in the same round (the target: at least 0.6);
//   - messages: POST /api/projects/{id}/conversations/{c}/messages (201) from -clients
//     clients into one conversation of "bench-writes";
//   - callbacks: POST /api/agent_callback/{id} with the agent headers (200), each client
//     on its own task, moving a step (status Doing, one step in_progress or completed);
//   - the read project "bench" is made to hold exactly -tasks tasks (the missing ones
//     are created concurrently; in rounds after the first there are none to create).
//     Reads run against their own project so that every round reads the same data
//     however many tasks the creates added;
//   - list50: GET /api/tasks?limit=50 from one client (p50 and p99 of -latency-requests
//     sequential requests after a warm-up), then from -clients clients for -duration;
//   - graphql: POST /graphql { tasks(first: 50) { id steps { title } } }, p50 and p99 of
//     sequential requests (the read project's 10,000 tasks);
//   - get: GET /api/tasks/{id} of random ids of the read project, the same two ways.
//
// After the rounds come -rounds runs of the event fan-out phase (-subscribers WebSocket
// subscribers; 0 skips it; fanout.go): 100 creates at 50/s, and for each the time from
// its 201 answer reaching the client to its event reaching each subscriber
// (fanout_p50_ms, fanout_p99_ms: issue 44's figure; negative when the event came
// first, fanout_early_share of the deliveries), the same from the event's "at", taken
// by the server as the write starts (fanout_p50_from_at_ms, fanout_p99_from_at_ms:
// what fanout_p50_ms and fanout_p99_ms measured before e3120f5), and the server's and
// the bench's own CPU per delivery (fanout_server_cpu_us_per_delivery,
// fanout_bench_cpu_us_per_delivery: the two share the cores). Each run is paired with
// one on the floor server, which writes each event on every socket right after its
// commit and does nothing else (floor_fanout_p50_ms and the rest; agentdesk first in
// odd runs): the least this machine's cores allow. -fanout-only runs that phase alone,
// without the rounds before it.
//
// For every throughput phase it reports successful requests per second, and how the
// machine's cores were split: the load generator's own CPU time (getrusage
// RUSAGE_SELF, user+system) and the server's (utime+stime from /proc/PID/stat), each
// divided by the wall time of the phase, in cores (1.0 is one core busy throughout),
// and the server's CPU time per successful request in µs (server_cpu_us_per_create,
// _list50, _get), which varies less than throughput on a shared machine.
// It samples the server's VmRSS every 100 ms during those phases (rss_under_load_mib)
// and reads VmHWM, the peak RSS, before the fan-out phase (peak_rss_mib_before_fanout)
// and at the end (peak_rss_mib, which includes the fan-out's WebSocket connections;
// -subscribers 0 leaves them out). Any answer other than the expected 2xx status, and any transport
// failure, counts as an error; a phase with errors is flagged.
//
// Each figure is measured once per round; the report gives the median and every round's
// value. A table goes to stderr as the run goes; stdout ends with exactly one JSON line
// of named figures (medians), e.g. creates_per_s, messages_per_s, callbacks_per_s,
// graphql_tasks50_p50_ms, list50_p50_ms, list50_p99_ms,
// list50_rps_16, get_p50_ms, get_p99_ms, get_rps_16, peak_rss_mib,
// loadgen_cpu_share_creates, server_cpu_share_creates (the _16 is -clients), with the
// per-round values under "round_values". At the end the server gets SIGTERM and must
// exit 0; the data directory is removed.
//
// -scale N runs the scale mode instead (scale.go): a project of N tasks beside one of
// -scale-small (10,000), the same reads timed on both, the unpaged list of N tasks
// streamed, restart to ready and the database's bytes per task (`make bench-scale`).
// With -scale-seed DIR it only writes the projects into DIR (the board's browser test,
// `make bench-ui-scale`); with -scale-prune it times the event and activity pruning of
// that many expired rows (`make bench-prune`); see scaleseed.go.
//
// -keep keeps the data directory and server.log for a look afterwards. -writes-only runs
// only the creates, messages and callbacks phases (no reads, fan-out or vector search),
// e.g. to read the writer's figures in server.log after a change to the write path.
//
// Exit status: 0 when all went well; 1 when a phase had errors, the server did not exit 0, or the run
// failed (the JSON line is still printed when figures were measured).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentdesk/agentdesk/backend/store"
)

type config struct {
	bin          string
	rounds       int
	duration     time.Duration
	clients      int
	tasks        int
	latencyN     int
	warmup       int
	subscribers  int
	synchronous  string
	jsonOut      string
	keepDataDirs bool
	db           string        // --db of the server and the command line: "" is SQLite in the data directory
	instances    int           // servers on the database (2 needs -db): requests alternate between them
	writesOnly   bool          // only the write phases (creates, messages, callbacks)
	fanoutOnly   bool          // only the fan-out phase
	floor        bool          // run the floor server's creates beside agentdesk's (floor.go)
	vectorChunks int           // chunks of the knowledge-base phase (vector.go); 0 skips it
	scale        int           // tasks of the scale mode's big project (scale.go); 0: the usual rounds
	scaleSmall   int           // tasks of the scale mode's small project, its baseline
	scaleSeed    string        // -scale-seed DIR: only write the scale projects into DIR (scaleseed.go)
	scaleAge     time.Duration // how old the seeded tasks and events are
	scalePrune   bool          // time the event and activity pruning at scale instead (scaleseed.go)
	scaleData    string        // a directory seeded before, for -scale-prune
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "bin/agentdesk", "the agentdesk binary to measure")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per figure; the median is reported")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "length of each throughput phase")
	flag.IntVar(&cfg.clients, "clients", 16, "concurrent clients of the throughput phases")
	flag.IntVar(&cfg.tasks, "tasks", 10_000, "tasks in the project the reads run against")
	flag.IntVar(&cfg.latencyN, "latency-requests", 3000, "timed sequential requests of each latency phase")
	flag.IntVar(&cfg.warmup, "warmup", 300, "untimed requests before each latency phase")
	flag.IntVar(&cfg.subscribers, "subscribers", 1000, "WebSocket subscribers of the fan-out phase (0 skips it)")
	flag.StringVar(&cfg.synchronous, "synchronous", "full", "the server's --synchronous (full or normal)")
	flag.StringVar(&cfg.jsonOut, "json-out", "", "also write the JSON line to this file")
	flag.IntVar(&cfg.vectorChunks, "vector-chunks", 100_000, "chunks (384 dims) in the space the vector search is timed on (0 skips the knowledge-base phase)")
	flag.StringVar(&cfg.db, "db", os.Getenv("AGENTDESK_DB"), "run the server (and the command line that prepares its projects) on this database, e.g. an empty postgres://user:pass@host/db (default: SQLite in the temporary data directory)")
	flag.IntVar(&cfg.instances, "instances", 1, "servers sharing the -db database (1 or 2): the timed requests and the fan-out's subscribers alternate between them; CPU and RSS figures are the first server's, but for servers_cpu_us_per_create and the machine figures")
	flag.BoolVar(&cfg.keepDataDirs, "keep", false, "keep the data directory (and server.log) instead of removing it")
	flag.BoolVar(&cfg.writesOnly, "writes-only", false, "run only the write phases (creates, messages, callbacks), e.g. to tune the write path")
	flag.BoolVar(&cfg.fanoutOnly, "fanout-only", false, "run only the event fan-out phase (-rounds runs of it), e.g. to tune the event stream")
	flag.BoolVar(&cfg.floor, "floor", true, "each round, also time the creates of a minimal server of the bench's own (floor.go) and report agentdesk's as a share of them")
	floorServe := flag.String("floor-serve", "", "(used by the bench itself) serve as the floor server on this address")
	floorData := flag.String("floor-data", "", "(used by the bench itself) the floor server's data directory")
	var sc soakConfig
	flag.DurationVar(&sc.duration, "soak", 0, "run the soak instead (soak.go): the mixed load at a steady rate for this long, e.g. 1h")
	flag.IntVar(&sc.rate, "soak-rate", 500, "the soak's requests per second, all kinds together")
	flag.IntVar(&sc.subscribers, "soak-subscribers", 200, "the soak's event stream subscribers")
	flag.IntVar(&cfg.scale, "scale", 0, "run the scale mode instead (scale.go): a project of this many tasks beside one of -scale-small, timed side by side")
	flag.IntVar(&cfg.scaleSmall, "scale-small", 10_000, "tasks of the scale mode's small project")
	flag.StringVar(&cfg.scaleSeed, "scale-seed", "", "with -scale: only write the scale mode's projects into this new or empty directory (scaleseed.go), e.g. for the board's browser test")
	flag.DurationVar(&cfg.scaleAge, "scale-age", 0, "with -scale-seed: how old the seeded tasks and events are, e.g. 2400h")
	flag.BoolVar(&cfg.scalePrune, "scale-prune", false, "with -scale: time the event and activity pruning passes with every row expired (scaleseed.go)")
	flag.StringVar(&cfg.scaleData, "scale-data", "", "with -scale-prune: a directory seeded by -scale-seed -scale-age 2400h (its old rows are pruned)")
	flag.Parse()
	if flag.NArg() > 0 || cfg.rounds < 1 || cfg.clients < 1 || cfg.tasks < 1 || cfg.latencyN < 1 || cfg.duration <= 0 ||
		(cfg.synchronous != "full" && cfg.synchronous != "normal") {
		fmt.Fprintln(os.Stderr, "bench: bad arguments; see go run ./backend/bench -help")
		os.Exit(2)
	}
	if *floorServe != "" {
		if err := serveFloor(*floorServe, *floorData, cfg.synchronous); err != nil {
			logf("floor server: %v", err)
			os.Exit(1)
		}
		return
	}
	if cfg.writesOnly {
		cfg.subscribers, cfg.vectorChunks = 0, 0
	}
	if cfg.fanoutOnly {
		if cfg.writesOnly || cfg.subscribers < 1 {
			fmt.Fprintln(os.Stderr, "bench: -fanout-only takes -subscribers of 1 or more, and no -writes-only")
			os.Exit(2)
		}
		cfg.vectorChunks = 0
	}
	if cfg.instances < 1 || cfg.instances > 2 || (cfg.instances == 2 && (cfg.db == "" || cfg.scale > 0 || sc.duration > 0)) {
		fmt.Fprintln(os.Stderr, "bench: -instances takes 1, or 2 with -db (several servers share a PostgreSQL database; not with -scale or -soak)")
		os.Exit(2)
	}
	if cfg.db != "" && cfg.scale > 0 {
		fmt.Fprintln(os.Stderr, "bench: -scale measures the SQLite file (its pages, its size); it takes no -db")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var code int
	if sc.duration > 0 {
		if sc.duration < time.Minute || sc.rate < 16 {
			fmt.Fprintln(os.Stderr, "bench: -soak takes at least 1m, -soak-rate at least 16")
			os.Exit(2)
		}
		code = runSoak(ctx, cfg, sc)
	} else if cfg.scale > 0 {
		if cfg.scaleSmall < 1000 {
			fmt.Fprintln(os.Stderr, "bench: -scale-small must be at least 1000")
			os.Exit(2)
		}
		switch {
		case cfg.scaleSeed != "":
			code = runScaleSeed(ctx, cfg)
		case cfg.scalePrune:
			code = runScalePrune(ctx, cfg)
		default:
			code = runScale(ctx, cfg)
		}
	} else {
		code = run(ctx, cfg)
	}
	stop()
	os.Exit(code)
}

// report collects every round's value of every figure, and the phases with errors.
type report struct {
	values  map[string][]float64
	order   []string
	errored map[string]bool // figures measured in a phase that had errors
	flagged []string
	errors  int64
}

func (r *report) add(name string, v float64) {
	if _, ok := r.values[name]; !ok {
		r.order = append(r.order, name)
	}
	r.values[name] = append(r.values[name], v)
}

// check flags a phase with errors and marks the figures it produced.
func (r *report) check(label string, p phase, figures ...string) {
	if p.errors == 0 {
		return
	}
	r.errors += p.errors
	r.flagged = append(r.flagged, label)
	for _, f := range figures {
		r.errored[f] = true
	}
	logf("  !! %s: %d errors (%d ok); e.g.:", label, p.errors, p.ok)
	for _, s := range p.errSamples {
		logf("       %s", s)
	}
}

func run(ctx context.Context, cfg config) int {
	dir, done, err := dataDir(cfg, "agentdesk-bench-")
	if err != nil {
		logf("bench: %v", err)
		return 1
	}
	defer done()
	srv := &server{bin: cfg.bin, dir: dir, db: cfg.db}
	fail := func(err error) int {
		logf("bench: %v", err)
		return 1
	}

	// Projects, tokens and agents come from the command line, before the server runs.
	reads, err := srv.newProject("bench")
	if err != nil {
		return fail(err)
	}
	writes, err := srv.newProject("bench-writes")
	if err != nil {
		return fail(err)
	}
	var fan project
	var fanStreams []string
	if cfg.subscribers > 0 {
		if fan, err = srv.newProject("bench-fanout"); err != nil {
			return fail(err)
		}
		if fanStreams, err = srv.streamTokens(fan, cfg.subscribers); err != nil {
			return fail(err)
		}
	}
	raiseFileLimit()
	diskBefore, err := diskSyncLatency(dir, 200)
	if err != nil {
		return fail(err)
	}
	logf("the disk: an fsync of a 4 KiB append takes %.2f ms (median of 200)", diskBefore)
	if err := srv.start(ctx, cfg.synchronous); err != nil {
		return fail(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = srv.stop()
		}
	}()
	if cfg.db != "" {
		logf("database: %s (the server's CPU and RSS figures leave PostgreSQL's own out; the machine lines count a local PostgreSQL's processes)", redactedDB(cfg.db))
	}
	logf("agentdesk %s serving on %s (pid %d, --synchronous %s); %d cores here; %d clients, %s phases, %d rounds",
		cfg.bin, srv.url(), srv.pid(), cfg.synchronous, runtime.NumCPU(), cfg.clients, cfg.duration, cfg.rounds)

	var others []string
	servers := []*server{srv}
	if cfg.instances == 2 {
		dir2, done2, err := dataDir(cfg, "agentdesk-bench-2-")
		if err != nil {
			return fail(err)
		}
		defer done2()
		srv2 := &server{bin: cfg.bin, dir: dir2, db: cfg.db}
		if err := srv2.start(ctx, cfg.synchronous); err != nil {
			return fail(err)
		}
		defer func() { _, _ = srv2.stop() }()
		others, servers = append(others, srv2.url()), append(servers, srv2)
		logf("a second agentdesk on the same database: %s (pid %d); requests alternate between the two", srv2.url(), srv2.pid())
	}
	l := newLoader(srv.url(), others...)
	l.servers, l.postgres = servers, cfg.db != ""
	r := &report{values: map[string][]float64{}, errored: map[string]bool{}}
	var seq atomic.Int64
	newWrite, newRead := createBody(&seq, writes.agent), createBody(&seq, reads.agent)
	var rssUnderLoad float64

	// The conversation the message phase posts to, and one task per client for the
	// callback phase (each client calls back on its own task, as agents do).
	var conv struct{ ID int64 }
	if err := l.post("/api/projects/"+writes.id+"/conversations", writes.token, []byte(`{"message":"benchmark","name":"bench"}`), http.StatusCreated, &conv); err != nil {
		return fail(err)
	}
	messagesPath := fmt.Sprintf("/api/projects/%s/conversations/%d/messages", writes.id, conv.ID)
	callbackTasks := make([]int64, cfg.clients)
	for i := range callbackTasks {
		var task struct{ ID int64 }
		if err := l.post("/api/tasks", writes.token, newWrite(), http.StatusCreated, &task); err != nil {
			return fail(err)
		}
		callbackTasks[i] = task.ID
	}
	var callbackSeq atomic.Int64

	// The floor (floor.go): a minimal server on the same machine, its creates timed
	// beside agentdesk's in every round.
	var floorCreates func() phase
	var floorFanout func() (fanoutResult, error)
	if cfg.floor {
		floorDir := filepath.Join(dir, "floor")
		self, err := os.Executable()
		if err == nil {
			err = os.Mkdir(floorDir, 0o755)
		}
		if err != nil {
			return fail(err)
		}
		floorSrv := &server{bin: self, dir: floorDir, floorToken: "floor-" + strconv.FormatUint(rand.Uint64(), 16)}
		if err := floorSrv.start(ctx, cfg.synchronous); err != nil {
			return fail(fmt.Errorf("the floor server: %w", err))
		}
		defer func() {
			if _, err := floorSrv.stop(); err != nil {
				logf("bench: the floor server: %v", err)
			}
		}()
		logf("the floor server (floor.go) serving on %s (pid %d)", floorSrv.url(), floorSrv.pid())
		fl := newLoader(floorSrv.url())
		fl.servers = []*server{floorSrv}
		newFloorWrite := createBody(&seq, floorAgent)
		floorCreates = func() phase {
			p := fl.throughput(ctx, floorSrv, cfg.clients, cfg.duration, func() error {
				return fl.do("POST", "/api/tasks", floorSrv.floorToken, newFloorWrite(), http.StatusCreated)
			})
			logThroughput("the floor: POST /api/tasks", cfg.clients, p)
			return p
		}
		floorFanout = func() (fanoutResult, error) {
			return fl.fanout(cfg.subscribers, fanoutEvents, fanoutRate, floorSrv.floorToken, []string{floorSrv.floorToken})
		}
	}

	for round := 1; round <= cfg.rounds && !cfg.fanoutOnly; round++ {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		logf("\nround %d of %d", round, cfg.rounds)

		// a. creates, and the floor's beside them: agentdesk first in odd rounds, the floor
		// first in even ones, so that neither always has the other's after-effects.
		var floor phase
		if floorCreates != nil && round%2 == 0 {
			floor = floorCreates()
		}
		p := l.throughput(ctx, srv, cfg.clients, cfg.duration, func() error {
			return l.do("POST", "/api/tasks", writes.token, newWrite(), http.StatusCreated)
		})
		logThroughput("POST /api/tasks", cfg.clients, p)
		r.add("creates_per_s", p.rps)
		r.add("loadgen_cpu_share_creates", p.loadgenCPU)
		r.add("server_cpu_share_creates", p.serverCPU)
		r.add("server_cpu_us_per_create", p.serverCPUPerRequest())
		r.add("servers_cpu_us_per_create", p.machine.serversUS)
		r.add("machine_cpu_us_per_create", p.machine.cpuUS)
		r.add("machine_switches_per_create", p.machine.switches)
		r.add("machine_idle_share_creates", p.machine.idleShare)
		if p.machine.postgresSeen {
			r.add("postgres_cpu_us_per_create", p.machine.postgresUS)
		}
		r.check(fmt.Sprintf("round %d creates", round), p, "creates_per_s")
		if floorCreates != nil {
			if round%2 == 1 {
				floor = floorCreates()
			}
			r.add("floor_creates_per_s", floor.rps)
			r.add("floor_server_cpu_us_per_create", floor.serverCPUPerRequest())
			r.add("creates_share_of_floor", p.rps/floor.rps)
			r.check(fmt.Sprintf("round %d the floor's creates", round), floor, "floor_creates_per_s", "creates_share_of_floor")
		}
		rssUnderLoad = max(rssUnderLoad, p.maxRSSMiB)

		// a2. messages posted to one conversation
		p = l.throughput(ctx, srv, cfg.clients, cfg.duration, func() error {
			return l.do("POST", messagesPath, writes.token, fmt.Appendf(nil, `{"message":"benchmark message %d"}`, seq.Add(1)), http.StatusCreated)
		})
		logThroughput("POST .../messages", cfg.clients, p)
		r.add("messages_per_s", p.rps)
		r.add("server_cpu_us_per_message", p.serverCPUPerRequest())
		r.check(fmt.Sprintf("round %d messages", round), p, "messages_per_s")

		// a3. agent callbacks: a step moves, with the agent headers
		p = l.throughput(ctx, srv, cfg.clients, cfg.duration, func() error {
			n := callbackSeq.Add(1)
			task := callbackTasks[int(n)%len(callbackTasks)]
			status := [2]string{"in_progress", "completed"}[n/int64(len(callbackTasks))%2]
			body := fmt.Appendf(nil, `{"project_id":%q,"status":"Doing","steps":[{"index":%d,"status":%q}]}`, writes.id, n%3, status)
			return l.send("POST", "/api/agent_callback/"+strconv.FormatInt(task, 10), writes.agentAuth, body, http.StatusOK)
		})
		logThroughput("POST /api/agent_callback", cfg.clients, p)
		r.add("callbacks_per_s", p.rps)
		r.add("server_cpu_us_per_callback", p.serverCPUPerRequest())
		r.check(fmt.Sprintf("round %d callbacks", round), p, "callbacks_per_s")
		rssUnderLoad = max(rssUnderLoad, p.maxRSSMiB)
		if cfg.writesOnly {
			continue
		}

		// b. the read project holds exactly cfg.tasks tasks
		t := time.Now()
		ids, created, err := l.fill(ctx, reads, cfg.tasks, cfg.clients, newRead)
		if err != nil {
			return fail(err)
		}
		logf("  read project: %d tasks (%d created now, %.1f s)", len(ids), created, time.Since(t).Seconds())

		// b. list, 50 per page
		// A read is measured twice: latency from one client (NAME_p50_ms, NAME_p99_ms),
		// then throughput from cfg.clients (NAME_rps_N and the CPU shares).
		readPhase := func(name, label string, fn func() error) {
			p := l.latency(ctx, cfg.warmup, cfg.latencyN, fn)
			logLatency(label, p)
			r.add(name+"_p50_ms", p.p50)
			r.add(name+"_p99_ms", p.p99)
			r.check(fmt.Sprintf("round %d %s latency", round, name), p, name+"_p50_ms", name+"_p99_ms")
			p = l.throughput(ctx, srv, cfg.clients, cfg.duration, fn)
			logThroughput(label, cfg.clients, p)
			rps := fmt.Sprintf("%s_rps_%d", name, cfg.clients)
			r.add(rps, p.rps)
			r.add("loadgen_cpu_share_"+name, p.loadgenCPU)
			r.add("server_cpu_share_"+name, p.serverCPU)
			r.add("server_cpu_us_per_"+name, p.serverCPUPerRequest())
			r.check(fmt.Sprintf("round %d %s throughput", round, name), p, rps)
			rssUnderLoad = max(rssUnderLoad, p.maxRSSMiB)
		}
		readPhase("list50", "GET /api/tasks?limit=50", func() error {
			return l.do("GET", "/api/tasks?limit=50", reads.token, nil, http.StatusOK)
		})

		// b2. the same page through GraphQL, with each task's steps
		var check struct {
			Data struct{ Tasks []struct{ ID int64 } }
		}
		if err := l.post("/graphql", reads.token, []byte(graphqlTasks50), http.StatusOK, &check); err != nil || len(check.Data.Tasks) != 50 {
			return fail(fmt.Errorf("GraphQL tasks(first: 50) answered %d tasks (%v), want 50", len(check.Data.Tasks), err))
		}
		p = l.latency(ctx, cfg.warmup, cfg.latencyN, func() error {
			return l.do("POST", "/graphql", reads.token, []byte(graphqlTasks50), http.StatusOK)
		})
		logLatency("GraphQL tasks(first: 50)", p)
		r.add("graphql_tasks50_p50_ms", p.p50)
		r.add("graphql_tasks50_p99_ms", p.p99)
		r.check(fmt.Sprintf("round %d graphql latency", round), p, "graphql_tasks50_p50_ms", "graphql_tasks50_p99_ms")

		// c. get by id
		readPhase("get", "GET /api/tasks/{id}", func() error {
			return l.do("GET", getPath(ids, rand.IntN), reads.token, nil, http.StatusOK)
		})
	}
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}
	if !cfg.writesOnly && !cfg.fanoutOnly {
		if ids, err := l.taskIDs(reads.token); err != nil || len(ids) != cfg.tasks {
			return fail(fmt.Errorf("after the rounds the read project holds %d tasks, want %d (%v)", len(ids), cfg.tasks, err))
		}
	}

	// d. memory, before the fan-out phase adds its thousand connections
	_, peakBeforeFanout, err := srv.memory()
	if err != nil {
		return fail(err)
	}

	if cfg.subscribers > 0 {
		logf("\nevent fan-out")
		// One run's figures, agentdesk's (prefix "") or the floor's ("floor_").
		addFanout := func(prefix string, fo fanoutResult) {
			r.add(prefix+"fanout_p50_ms", fo.p50)
			r.add(prefix+"fanout_p99_ms", fo.p99)
			r.add(prefix+"fanout_early_share", float64(fo.early)/float64(fo.deliveries))
			r.add(prefix+"fanout_p50_from_at_ms", fo.p50At)
			r.add(prefix+"fanout_p99_from_at_ms", fo.p99At)
			r.add(prefix+"fanout_server_cpu_us_per_delivery", fo.cpuPerDelivery)
			r.add(prefix+"fanout_bench_cpu_us_per_delivery", fo.benchCPUPerDelivery)
			r.add(prefix+"fanout_create_p50_ms", fo.createP50)
		}
		// The floor's fan-out (floor.go) beside agentdesk's: agentdesk first in odd rounds.
		for round := 1; round <= cfg.rounds && ctx.Err() == nil; round++ {
			var floor fanoutResult
			var floorErr error
			if floorFanout != nil && round%2 == 0 {
				floor, floorErr = floorFanout()
			}
			fo, err := l.fanout(cfg.subscribers, fanoutEvents, fanoutRate, fan.token, fanStreams)
			if err != nil {
				r.check(fmt.Sprintf("round %d fan-out", round), phase{errors: 1, errSamples: []string{err.Error()}},
					"fanout_p50_ms", "fanout_p99_ms", "fanout_p50_from_at_ms", "fanout_p99_from_at_ms")
			} else {
				addFanout("", fo)
				logFanout("", cfg.subscribers, fo)
			}
			if floorFanout == nil {
				continue
			}
			if round%2 == 1 {
				floor, floorErr = floorFanout()
			}
			if floorErr != nil {
				r.check(fmt.Sprintf("round %d the floor's fan-out", round), phase{errors: 1, errSamples: []string{floorErr.Error()}},
					"floor_fanout_p50_ms", "floor_fanout_p99_ms")
				continue
			}
			addFanout("floor_", floor)
			logFanout("the floor: ", cfg.subscribers, floor)
		}
	}
	rssEnd, peak, err := srv.memory()
	if err != nil {
		return fail(err)
	}

	// 4. SIGTERM; the server must exit 0.
	stopped = true
	exitCode, stopErr := srv.stop()
	if stopErr != nil {
		logf("bench: %v", stopErr)
	}
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}
	diskAfter, err := diskSyncLatency(dir, 200)
	if err != nil {
		return fail(err)
	}
	perBatch, serverFsync, haveStats := writerStats(srv.logTail(4096))

	// 5. Knowledge bases, on a server of their own (vector.go).
	if cfg.vectorChunks > 0 && ctx.Err() == nil {
		vectorPhase(ctx, cfg, dir, r)
	}

	out := map[string]any{
		"rounds":                     cfg.rounds,
		"clients":                    cfg.clients,
		"duration_s":                 cfg.duration.Seconds(),
		"tasks":                      cfg.tasks,
		"cores":                      runtime.NumCPU(),
		"synchronous":                cfg.synchronous,
		"engine":                     engineOf(cfg.db),
		"instances":                  cfg.instances,
		"peak_rss_mib":               round(peak, 1),
		"peak_rss_mib_before_fanout": round(peakBeforeFanout, 1),
		"rss_under_load_mib":         round(rssUnderLoad, 1),
		"rss_end_mib":                round(rssEnd, 1),
		"errors":                     r.errors,
		"flagged_phases":             append([]string{}, r.flagged...),
		"server_exit_code":           exitCode,
		"disk_fsync_ms_before":       round(diskBefore, 3),
		"disk_fsync_ms_after":        round(diskAfter, 3),
	}
	if haveStats {
		out["writes_per_batch"], out["server_fsync_mean_ms"] = round(perBatch, 2), round(serverFsync, 3)
	}
	roundValues := map[string][]float64{}
	logf("\n%-28s %12s  %-12s %-34s %s", "figure", "median", "target", "rounds", "")
	for _, name := range r.order {
		med := median(r.values[name])
		out[name] = round(med, 3)
		roundValues[name] = roundAll(r.values[name])
		note := ""
		if r.errored[name] {
			note = "ERRORS in some round"
		}
		logf("%-28s %12.3f  %-12s %-34s %s", name, med, target(name, med, cfg.clients), fmt.Sprint(roundValues[name]), note)
	}
	out["round_values"] = roundValues
	// The memory target is for the task load; the fan-out's WebSockets come after it.
	logf("%-28s %12.1f  %-12s (VmHWM after the task load, before the fan-out phase; VmRSS up to %.1f MiB under load)",
		"peak_rss_mib_before_fanout", peakBeforeFanout, target("peak_rss_mib_before_fanout", peakBeforeFanout, cfg.clients), rssUnderLoad)
	logf("%-28s %12.1f  %-12s (VmHWM at the end, with the fan-out's WebSockets)", "peak_rss_mib", peak, "")
	if len(r.flagged) > 0 {
		logf("FLAGGED (phases with errors, %d errors in all): %s", r.errors, strings.Join(r.flagged, "; "))
	}
	logf("server exit code after SIGTERM: %d", exitCode)
	// The write figures depend on the disk as much as on the code: say how fast it was.
	logf("the disk: fsync %.2f ms before the run, %.2f ms after (4 KiB appends, medians)", diskBefore, diskAfter)
	if haveStats {
		logf("the server's writer: %.2f writes per batch (one fsync each), fsync %.2f ms on average", perBatch, serverFsync)
	}

	line, err := json.Marshal(out)
	if err != nil {
		return fail(err)
	}
	fmt.Println(string(line))
	if cfg.jsonOut != "" {
		if err := os.WriteFile(cfg.jsonOut, append(line, '\n'), 0o644); err != nil {
			return fail(err)
		}
	}
	if len(r.flagged) > 0 || stopErr != nil {
		return 1
	}
	return 0
}

// graphqlTasks50 is the GraphQL request the bench times: a page of 50 tasks with the
// titles of their steps.
const graphqlTasks50 = `{"query":"{ tasks(first: 50) { id steps { title } } }"}`

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// fanoutEvents creates are made at fanoutRate a second in each fan-out run.
const (
	fanoutEvents = 100
	fanoutRate   = 50
)

// logFanout prints one fan-out run.
func logFanout(who string, subscribers int, fo fanoutResult) {
	logf("  %s%d subscribers, %d creates at %d/s (answered in %.2f ms, p50): from the answer p50 %.2f ms  p99 %.2f ms (%.1f%% before it); from the event's at p50 %.2f ms  p99 %.2f ms; CPU a delivery: server %.2f µs, bench %.2f µs",
		who, subscribers, fanoutEvents, fanoutRate, fo.createP50, fo.p50, fo.p99, 100*float64(fo.early)/float64(fo.deliveries), fo.p50At, fo.p99At, fo.cpuPerDelivery, fo.benchCPUPerDelivery)
}

func logThroughput(what string, clients int, p phase) {
	logf("  %-26s %2d clients %9.0f req/s  ok %7d  errors %-4d  CPU loadgen %.2f + server %.2f of %d cores  RSS %.1f MiB",
		what, clients, p.rps, p.ok, p.errors, p.loadgenCPU, p.serverCPU, runtime.NumCPU(), p.maxRSSMiB)
	logf("  %-26s %s", "", p.machine)
}

func logLatency(what string, p phase) {
	logf("  %-26s  1 client   p50 %.3f ms  p99 %.3f ms  mean %.3f ms  (%d requests, errors %d)",
		what, p.p50, p.p99, p.latencyMean, p.ok, p.errors)
}

// target shows how a median compares with the figure the project aims at ("" when
// there is none).
func target(name string, v float64, clients int) string {
	type goal struct {
		atLeast bool
		value   float64
	}
	goals := map[string]goal{
		"creates_per_s":              {true, 7000},
		"creates_share_of_floor":     {true, 0.6},
		"messages_per_s":             {true, 5000},
		"callbacks_per_s":            {true, 5000},
		"list50_p50_ms":              {false, 0.3},
		"list50_rps_16":              {true, 4000},
		"get_rps_16":                 {true, 3500},
		"peak_rss_mib_before_fanout": {false, 80},
		"fanout_p50_ms":              {false, 3},
		"fanout_p99_ms":              {false, 15},
	}
	g, ok := goals[name]
	if !ok || clients != 16 {
		return ""
	}
	met := v < g.value
	sign := "<"
	if g.atLeast {
		met, sign = v >= g.value, ">="
	}
	if met {
		return "ok " + sign + fmt.Sprint(g.value)
	}
	return "MISS " + sign + fmt.Sprint(g.value)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
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

// engineOf names the engine of a -db value, for the figures.
func engineOf(db string) string {
	if db == "" {
		return "sqlite"
	}
	return "postgres"
}

// redactedDB is a -db value fit for the log: without its password.
func redactedDB(db string) string {
	loc, err := store.ParseDB(db)
	if err != nil {
		return "(not a postgres:// URL)"
	}
	return loc.Redacted()
}
