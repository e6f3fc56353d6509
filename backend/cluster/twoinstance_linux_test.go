package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the checks

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// The two-instance test of issue 21. `agentdesk --serve --db postgres://…` is still
// refused (cli.checkDB, until the engine is declared complete), so each instance is
// this test binary run again as a server (serveEnv): a real process, on the real
// server.Start, that kill -9 really kills.

// serveEnv, set to a database URL, makes the test binary serve instead of testing.
const serveEnv = "AGENTDESK_CLUSTER_SERVE"

// durationEnv sets the load's length in seconds (default 20).
const durationEnv = "AGENTDESK_TWO_INSTANCE_SECONDS"

// serveForTest runs a server on the database at url until SIGTERM, writing its URL on
// the first line of stdout.
func serveForTest(url string) {
	loc, err := store.ParseDB(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "agentdesk-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	srv, err := server.Start(ctx, server.Config{DB: loc, DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		os.Exit(1)
	}
	fmt.Println(srv.URL())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		os.Exit(1)
	}
}

// instance is a server process.
type instance struct {
	url    string
	cmd    *exec.Cmd
	wait   sync.Once
	err    error // cmd.Wait's
	killed bool  // by the test, with SIGKILL
}

// waitExit waits for the process to end (once) and returns how it ended.
func (in *instance) waitExit() error {
	in.wait.Do(func() { in.err = in.cmd.Wait() })
	return in.err
}

func startInstance(t *testing.T, dbURL string) *instance {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+dbURL)
	cmd.Stderr = os.Stderr
	// The server dies with the test binary, however that ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{cmd: cmd}
	t.Cleanup(func() {
		if in.killed {
			return
		}
		// A clean shutdown (and, under -race, no race found: that exits 66).
		cmd.Process.Signal(syscall.SIGTERM)
		if err := in.waitExit(); err != nil {
			t.Errorf("instance %s: %v", in.url, err)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the instance did not start: %v", err)
	}
	in.url = strings.TrimSpace(line)
	return in
}

// killed is set once instance 1 is killed: its clients move to instance 0.
type cluster struct {
	inst   [2]*instance
	killed atomic.Bool
}

// base is the URL a client of instance i uses now.
func (c *cluster) base(i int) string {
	if i == 1 && c.killed.Load() {
		return c.inst[0].url
	}
	return c.inst[i].url
}

// call sends one request to instance i. retry: the server said nothing was stored
// (503: a write cancelled by a deadlock with the other server's batch); lost: no
// answer (the instance was killed), so whether it was stored is unknown.
func (c *cluster) call(client *http.Client, i int, method, path string, header http.Header, body any, out any) (status int, err error) {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, c.base(i)+path, bytes.NewReader(raw))
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode/100 == 2 && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, err
		}
	} else if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, nil
}

// taskRecord is what the clients know of one task: the status of its last acknowledged
// change, and the status of a change sent whose answer never came (unknown outcome).
type taskRecord struct {
	id       int64
	acked    string
	unknown  string
	response bool // a response was acknowledged
}

// ledger is every acknowledged write.
type ledger struct {
	mu       sync.Mutex
	tasks    map[int64]*taskRecord
	messages map[int64]bool // message id -> acknowledged
	writes   atomic.Int64
	retries  atomic.Int64 // 503s (deadlocks between the servers' batches), sent again
	lost     atomic.Int64 // requests whose answer never came (the kill)
	failures []string
}

func (l *ledger) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) < 20 {
		l.failures = append(l.failures, fmt.Sprintf(format, args...))
	}
}

// TestTwoInstances: two server processes on one PostgreSQL database; 8 users and 8
// agents spread over both (each user's agent on the other instance) create tasks,
// answer them through agent callbacks, respond to their questions and post messages
// for AGENTDESK_TWO_INSTANCE_SECONDS (20 by default); instance 1 is killed with
// SIGKILL halfway, and its clients carry on against instance 0. Then: every
// acknowledged write is in the database; a stream on each instance (the one on the
// killed instance resuming on the other from its last seq) delivered the same events in
// the same order, seqs 1, 2, 3, ... with no gap; 64 jobs due at 25% (both instances alive, both schedulers waking for them) each fired exactly once.
func TestTwoInstances(t *testing.T) {
	seconds := 20
	if s := os.Getenv(durationEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			t.Fatalf("%s=%q: want a whole number of seconds, 2 or more", durationEnv, s)
		}
		seconds = n
	}
	if testing.Short() {
		seconds = min(seconds, 5)
	}
	duration := time.Duration(seconds) * time.Second
	ctx := context.Background()
	dbURL := pgtest.Migrated(t, testenv.MigratePostgres)

	// Setup through a store of the test's own: the project, tokens, agents, a job.
	st, err := store.OpenLocation(ctx, testenv.ParseDB(t, dbURL), "", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st, service.Options{})
	defer svc.Close()
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		t.Fatal(err)
	}
	projects, err := svc.Projects(ctx, auth.Owner(""))
	if err != nil || len(projects) != 1 {
		t.Fatalf("projects: %v %v", projects, err)
	}
	project, err := svc.Project(ctx, auth.Owner(""), projects[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	owner := auth.Owner(project.ID)
	const pairs = 8
	type pair struct {
		user        string // token
		agentHeader http.Header
		agentID     int64
		conv        int64
	}
	ps := make([]pair, pairs)
	for i := range ps {
		tok, _, err := svc.CreateToken(ctx, owner, service.CreateTokenInput{Name: fmt.Sprintf("user%d", i), Type: model.TokenPlatform,
			Scopes: []string{auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite}})
		if err != nil {
			t.Fatal(err)
		}
		a, err := svc.CreateAgent(ctx, owner, fmt.Sprintf("agent%d", i))
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("X-Task-Authorization", auth.AgentDigest(project.ID, project.TokenSecret))
		h.Set("X-Task-Namespace", project.Namespace)
		h.Set("X-Agent-Name", a.Name)
		name, first := fmt.Sprintf("conversation %d", i), "hello"
		conv, err := svc.CreateConversation(ctx, owner, service.CreateConversationInput{Name: &name, Message: &first}, "")
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = pair{user: tok, agentHeader: h, agentID: a.ID, conv: conv.ID}
	}
	watchTok, _, err := svc.CreateToken(ctx, owner, service.CreateTokenInput{Name: "watcher", Type: model.TokenPlatform, Scopes: auth.PlatformScopes})
	if err != nil {
		t.Fatal(err)
	}
	// Jobs due together during the run: both instances' schedulers wake for them at
	// once and run them one write each, in the same order: without a claim that another
	// server's scheduler respects, some run twice.
	const jobs = 64
	var jobIDs []int64
	for k := range jobs {
		name, cron, summary := fmt.Sprintf("during the run %d", k), "0 3 * * *", fmt.Sprintf("made by job %d", k)
		job, err := svc.CreateJob(ctx, owner, service.JobInput{Name: &name, Cron: &cron, Summary: &summary})
		if err != nil {
			t.Fatal(err)
		}
		jobIDs = append(jobIDs, job.ID)
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Due during the run, while both instances are alive (their schedulers read it when
	// they start).
	start := time.Now()
	dueAt := start.Add(duration / 4).UTC()
	if _, err := db.ExecContext(ctx, `UPDATE jobs SET next_run_at = $1`, dueAt.Format("2006-01-02T15:04:05.000000Z")); err != nil {
		t.Fatal(err)
	}

	c := &cluster{}
	c.inst[0] = startInstance(t, dbURL)
	c.inst[1] = startInstance(t, dbURL)

	// A stream on each instance, from the first event.
	var seenMu sync.Mutex
	var seen [2][]frame
	var streamWG sync.WaitGroup
	stopStreams := make(chan struct{})
	for i := range 2 {
		streamWG.Add(1)
		go func() {
			defer streamWG.Done()
			since := int64(0)
			for attempt := 0; ; attempt++ {
				err := follow(c.base(i), watchTok, since, func(f frame) bool {
					seenMu.Lock()
					seen[i] = append(seen[i], f)
					seenMu.Unlock()
					since = f.Seq
					return true
				}, stopStreams)
				select {
				case <-stopStreams:
					return
				default:
				}
				// Its instance was killed, or it was closed (4008 for a client that fell
				// behind): carry on from the last seq, against the instance alive.
				if attempt == 100 {
					t.Errorf("stream %d: %v", i, err)
					return
				}
			}
		}()
	}

	// The load.
	l := &ledger{tasks: map[int64]*taskRecord{}, messages: map[int64]bool{}}
	end := start.Add(duration)
	killAt := start.Add(duration / 2)
	var wg sync.WaitGroup
	for i := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runPair(c, l, project.ID, i, ps[i].user, ps[i].agentHeader, ps[i].agentID, ps[i].conv, end)
		}()
	}
	time.Sleep(time.Until(killAt))
	c.killed.Store(true)
	c.inst[1].killed = true
	if err := c.inst[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := c.inst[1].waitExit(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("instance 1 was not killed by SIGKILL: %v", err)
	}
	wg.Wait()

	// Every acknowledged write is in the database.
	_, last, err := st.Read().EventBounds(ctx, project.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range l.failures {
		t.Error(f)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, status FROM tasks`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int64]string{}
	for rows.Next() {
		var id int64
		var status string
		if err := rows.Scan(&id, &status); err != nil {
			t.Fatal(err)
		}
		stored[id] = status
	}
	rows.Close()
	unknown := 0
	for id, r := range l.tasks {
		got, ok := stored[id]
		switch {
		case !ok:
			t.Errorf("task %d was acknowledged but is not stored", id)
		case got != r.acked && (r.unknown == "" || got != r.unknown):
			t.Errorf("task %d is %s; its last acknowledged change made it %s (unanswered: %q)", id, got, r.acked, r.unknown)
		}
		if r.unknown != "" {
			unknown++
		}
	}
	var msgIDs []int64
	for id := range l.messages {
		msgIDs = append(msgIDs, id)
	}
	var storedMsgs int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE id = ANY($1)`, msgIDs).Scan(&storedMsgs); err != nil {
		t.Fatal(err)
	}
	if storedMsgs != len(msgIDs) {
		t.Errorf("%d acknowledged messages, %d of them stored", len(msgIDs), storedMsgs)
	}

	// Both streams delivered the same events, in the same order, with no gap.
	reached := func() bool {
		seenMu.Lock()
		defer seenMu.Unlock()
		for _, s := range seen {
			if len(s) == 0 || s[len(s)-1].Seq < last {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(2 * waitFor); !reached(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the streams did not reach seq %d in %s (%d and %d events)", last, 2*waitFor, len(seen[0]), len(seen[1]))
			break
		}
	}
	close(stopStreams)
	streamWG.Wait()
	if err := sameNoGap(seen[0], seen[1]); err != nil {
		t.Error(err)
	}
	if int64(len(seen[0])) != last {
		t.Errorf("stream 0 delivered %d events of %d", len(seen[0]), last)
	}

	// Each job fired once: one run, one task.
	rows, err = db.QueryContext(ctx, `SELECT j.id, (SELECT count(*) FROM job_runs r WHERE r.job_id = j.id),
		(SELECT count(*) FROM tasks t WHERE t.summary = 'made by job ' || substr(j.name, 16)) FROM jobs j ORDER BY j.id`)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for rows.Next() {
		var id int64
		var runs, tasks int
		if err := rows.Scan(&id, &runs, &tasks); err != nil {
			t.Fatal(err)
		}
		checked++
		if runs != 1 || tasks != 1 {
			t.Errorf("job %d, due at %s: %d runs, %d tasks; want 1 and 1", id, dueAt.Format(time.RFC3339Nano), runs, tasks)
		}
	}
	rows.Close()
	if checked != jobs {
		t.Errorf("%d jobs checked, want %d", checked, jobs)
	}
	t.Logf("%s: %d acknowledged writes (%.0f/s), %d tasks, %d messages, %d events; %d retried after 503, %d unanswered at the kill (%d tasks left in doubt)",
		duration, l.writes.Load(), float64(l.writes.Load())/duration.Seconds(), len(l.tasks), len(l.messages), last, l.retries.Load(), l.lost.Load(), unknown)
}

// follow reads the project's events from since on baseURL's stream, handing each to
// take until take returns false (nil) or the stream fails (its error).
func follow(baseURL, token string, since int64, take func(frame) bool, stop <-chan struct{}) error {
	u := strings.Replace(baseURL, "http://", "ws://", 1) + "/api/events?since=" + strconv.FormatInt(since, 10)
	conn, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		return err
	}
	defer conn.Close()
	go func() { <-stop; conn.Close() }()
	for {
		var f frame
		if err := conn.ReadJSON(&f); err != nil {
			return err
		}
		if !take(f) {
			return nil
		}
	}
}

// runPair is user i (on instance i%2) and its agent (on the other instance) until end:
// a task for the agent, which asks a question, the user's answer, the agent's Done, a
// message in the user's conversation; again.
func runPair(c *cluster, l *ledger, projectID string, i int, userTok string, agentHeader http.Header, agentID, conv int64, end time.Time) {
	client := &http.Client{Timeout: 30 * time.Second}
	userInst, agentInst := i%2, (i+1)%2
	userHeader := http.Header{"Authorization": {"Bearer " + userTok}}
	// send retries a 503 (nothing stored) and reports an unanswered request as lost.
	send := func(inst int, method, path string, h http.Header, body, out any) (ok bool) {
		for {
			status, err := c.call(client, inst, method, path, h, body, out)
			switch {
			case err == nil:
				l.writes.Add(1)
				return true
			case status == http.StatusServiceUnavailable:
				l.retries.Add(1)
				continue
			case status == 0 && c.killed.Load():
				l.lost.Add(1)
				return false
			default:
				l.fail("pair %d: %v", i, err)
				return false
			}
		}
	}
	for n := 0; time.Now().Before(end); n++ {
		var task model.Task
		if !send(userInst, "POST", "/api/tasks", userHeader, map[string]any{"summary": fmt.Sprintf("pair %d round %d", i, n), "agent_id": agentID}, &task) {
			continue
		}
		r := &taskRecord{id: task.ID, acked: task.Status}
		l.mu.Lock()
		l.tasks[task.ID] = r
		l.mu.Unlock()
		step := func(inst int, path string, h http.Header, body any, want string) bool {
			var got model.Task
			if !send(inst, "POST", path, h, body, &got) {
				l.mu.Lock()
				r.unknown = want
				l.mu.Unlock()
				return false
			}
			l.mu.Lock()
			r.acked = got.Status
			l.mu.Unlock()
			if got.Status != want {
				l.fail("task %d is %s after the change to %s", task.ID, got.Status, want)
				return false
			}
			return true
		}
		callback := fmt.Sprintf("/api/agent_callback/%d", task.ID)
		if !step(agentInst, callback, agentHeader, map[string]any{"project_id": projectID, "status": model.StatusWaiting, "waiting_details": "which one?"}, model.StatusWaiting) ||
			!step(userInst, fmt.Sprintf("/api/tasks/%d/respond", task.ID), userHeader, map[string]any{"response": "the first"}, model.StatusDoing) ||
			!step(agentInst, callback, agentHeader, map[string]any{"project_id": projectID, "status": model.StatusDone, "message": "done"}, model.StatusDone) {
			continue
		}
		var msg model.Message
		if send(userInst, "POST", fmt.Sprintf("/api/projects/%s/conversations/%d/messages", projectID, conv), userHeader, map[string]any{"message": fmt.Sprintf("round %d done", n)}, &msg) {
			l.mu.Lock()
			l.messages[msg.ID] = true
			l.mu.Unlock()
		}
	}
}
