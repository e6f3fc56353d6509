package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/agentdesk/agentdesk/backend/auth"
)

// The crash loop: the server is killed with SIGKILL at random moments under a mixed
// load, and restarted. `make test` runs 5 rounds; `make crashloop` 50
// (AGENTDESK_CRASHLOOP_ROUNDS). AGENTDESK_CRASHLOOP_SEED repeats a run's kill moments.

// crashOp is one write of the load, kept to check it and to send it again.
type crashOp struct {
	kind   string // task, callback, respond, message, document, knowledge, jobrun
	key    string // Idempotency-Key ("" for writes that take none)
	method string
	path   string
	body   []byte
	ctype  string
	header map[string]string // besides Authorization
	token  string
	status int // the success status
	answer []byte
	id     int64 // the object created (the task, for callbacks and responds)
	want   string
}

// crashEnv is the data directory, its credentials and the server on it.
type crashEnv struct {
	data, project, secret   string
	agentID, spaceID, jobID int64
	user, dataToken         string
	convs                   [8]int64
	srv                     *server
	client                  *http.Client
}

func (e *crashEnv) send(op *crashOp) (int, []byte, error) {
	req, err := http.NewRequest(op.method, e.srv.url+op.path, bytes.NewReader(op.body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", op.ctype)
	if op.token != "" {
		req.Header.Set("Authorization", "Bearer "+op.token)
	}
	if op.key != "" {
		req.Header.Set("Idempotency-Key", op.key)
	}
	for k, v := range op.header {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// do sends op and fills in its answer and id; false if the server did not answer.
func (e *crashEnv) do(t *testing.T, op *crashOp) bool {
	status, b, err := e.send(op)
	if err != nil {
		return false
	}
	if status != op.status {
		t.Errorf("%s %s (%s): %d %s, want %d", op.method, op.path, op.kind, status, b, op.status)
		return false
	}
	op.answer = b
	var v struct {
		ID   int64
		Data struct{ RunJobNow struct{ ID int64 } }
	}
	json.Unmarshal(b, &v)
	if op.kind == "jobrun" {
		v.ID = v.Data.RunJobNow.ID
	}
	if op.kind != "callback" && op.kind != "respond" {
		op.id = v.ID
	}
	return true
}

func jsonOp(kind, key, method, path, token string, status int, body any) *crashOp {
	b, _ := json.Marshal(body)
	return &crashOp{kind: kind, key: key, method: method, path: path, body: b, ctype: "application/json", token: token, status: status}
}

// worker runs the load of one client until stop, sending each acknowledged write to
// acked and the one in flight when the server died to inFlight.
func (e *crashEnv) worker(t *testing.T, round, g int, stop *atomic.Bool, acked chan<- *crashOp, inFlight chan<- *crashOp) {
	for i := 0; !stop.Load(); i++ {
		k := fmt.Sprintf("r%d-g%d-i%d", round, g, i)
		task := jsonOp("task", k+"-task", "POST", "/api/tasks", e.user, 201,
			map[string]any{"summary": "task " + k, "agent_id": e.agentID, "steps": []map[string]string{{"title": "a"}, {"title": "b"}}})
		ops := []*crashOp{task}
		ops = append(ops, jsonOp("callback", k+"-cb", "POST", "", "", 200,
			map[string]any{"project_id": e.project, "status": "Waiting", "waiting_details": "which? " + k, "message": "asking " + k}))
		ops[1].header = map[string]string{"X-Task-Authorization": auth.AgentDigest(e.project, e.secret), "X-Agent-Name": "worker"}
		ops[1].want = "asking " + k
		ops = append(ops, jsonOp("respond", k+"-respond", "POST", "", e.user, 200, map[string]any{"response": "answer " + k}))
		ops[2].want = "answer " + k
		msg := jsonOp("message", k+"-msg", "POST", fmt.Sprintf("/api/projects/%s/conversations/%d/messages", e.project, e.convs[g]), e.user, 201,
			map[string]any{"message": "message " + k})
		msg.want = "message " + k
		ops = append(ops, msg)
		switch i % 4 {
		case 3:
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, _ := mw.CreateFormFile("file", "doc-"+k+".txt")
			fw.Write([]byte("document " + k))
			mw.Close()
			ops = append(ops, &crashOp{kind: "document", method: "POST", path: fmt.Sprintf("/api/projects/%s/conversations/%d/documents", e.project, e.convs[g]),
				body: buf.Bytes(), ctype: mw.FormDataContentType(), token: e.user, status: 201, want: "document " + k})
		case 1:
			ops = append(ops, jsonOp("knowledge", "", "POST", fmt.Sprintf("/api/vector/spaces/%d/documents", e.spaceID), e.dataToken, 201,
				map[string]any{"name": "kb " + k, "text": "knowledge about " + k + ": the crash loop writes it and checks it after every kill."}))
		}
		if i%8 == 5 {
			ops = append(ops, jsonOp("jobrun", "", "POST", "/graphql", e.user, 200,
				map[string]any{"query": fmt.Sprintf("mutation { runJobNow(id: %d) { id } }", e.jobID)}))
		}
		for _, op := range ops {
			if op.kind == "callback" || op.kind == "respond" {
				op.id = task.id
				if op.kind == "callback" {
					op.path = fmt.Sprintf("/api/agent_callback/%d", task.id)
				} else {
					op.path = fmt.Sprintf("/api/tasks/%d/respond", task.id)
				}
			}
			if stop.Load() {
				return
			}
			if !e.do(t, op) {
				if op.key != "" && !t.Failed() {
					inFlight <- op // no answer: it may or may not have happened
				}
				return
			}
			acked <- op
		}
	}
}

// TestCrashLoop: rounds of a mixed load from 8 clients (tasks created with an
// Idempotency-Key, agent callbacks asking a question, responds, messages, document
// uploads, knowledge documents, job runs) killed with SIGKILL after a random number of
// acknowledged writes, then restarted. After each restart: integrity_check is ok; every
// acknowledged write is there; each project's event seqs run from 1 without a gap to
// its counter; every Idempotency-Key sent again gets the answer it got the first time
// (the writes in flight at the kill, sent again, get one answer and keep it).
func TestCrashLoop(t *testing.T) {
	rounds := 5
	if s := os.Getenv("AGENTDESK_CRASHLOOP_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTDESK_CRASHLOOP_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("%d rounds, AGENTDESK_CRASHLOOP_SEED=%d", rounds, seed)

	e := &crashEnv{data: t.TempDir(), client: &http.Client{Timeout: 30 * time.Second}}
	var p struct {
		ID          string `json:"id"`
		TokenSecret string `json:"token_secret"`
	}
	json.Unmarshal([]byte(mustCLI(t, "project", "create", "--name", "crash", "--data", e.data)), &p)
	e.project, e.secret = p.ID, p.TokenSecret
	var a struct{ ID int64 }
	json.Unmarshal([]byte(mustCLI(t, "agent", "create", "--project", p.ID, "--name", "worker", "--data", e.data)), &a)
	e.agentID = a.ID
	e.user = strings.TrimSpace(mustCLI(t, "token", "create", "--project", p.ID, "--name", "user", "--data", e.data,
		"--scopes", "task:read,task:write,messaging:read,messaging:write,admin"))
	e.dataToken = strings.TrimSpace(mustCLI(t, "token", "create", "--project", p.ID, "--name", "kb", "--type", "data",
		"--scopes", "vector:read,vector:write", "--data", e.data))
	e.srv = startServer(t, e.data)
	for g := range e.convs {
		op := jsonOp("conversation", "", "POST", "/api/projects/"+p.ID+"/conversations", e.user, 201, map[string]any{"message": fmt.Sprintf("client %d", g)})
		if !e.do(t, op) {
			t.Fatal("create a conversation")
		}
		e.convs[g] = op.id
	}
	space := jsonOp("space", "", "POST", "/api/vector/spaces", e.dataToken, 201, map[string]any{"name": "kb"})
	job := jsonOp("job", "", "POST", "/graphql", e.user, 200, map[string]any{"query": `mutation { createJob(name: "pulse", cron: "* * * * *", summary: "pulse") { id } }`})
	if !e.do(t, space) || !e.do(t, job) {
		t.Fatal("create the knowledge base and the job")
	}
	e.spaceID = space.id
	var j struct {
		Data struct{ CreateJob struct{ ID int64 } }
	}
	json.Unmarshal(job.answer, &j)
	e.jobID = j.Data.CreateJob.ID

	var all []*crashOp // every acknowledged write so far
	for round := range rounds {
		killAfter := 30 + rng.IntN(300)
		var stop atomic.Bool
		acked := make(chan *crashOp, 1024)
		inFlight := make(chan *crashOp, 8)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() { defer wg.Done(); e.worker(t, round, g, &stop, acked, inFlight) }()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		n := 0
	load:
		for {
			select {
			case op := <-acked:
				all = append(all, op)
				if n++; n == killAfter {
					e.srv.cmd.Process.Signal(syscall.SIGKILL)
					e.srv.cmd.Wait()
					break load
				}
			case <-done:
				t.Fatalf("round %d: the clients stopped after %d writes, before the kill at %d\n%s", round, n, killAfter, e.srv.stderr.String())
			}
		}
		stop.Store(true)
		<-done
		close(acked)
		for op := range acked { // answered just before the kill
			all = append(all, op)
		}
		close(inFlight)
		if t.Failed() {
			t.FailNow()
		}

		e.srv = startServer(t, e.data)
		// The writes in flight, sent again: one answer, then the same again.
		retried := 0
		for op := range inFlight {
			if !e.do(t, op) {
				t.Fatalf("round %d: %s %s sent again after the restart failed", round, op.kind, op.key)
			}
			all = append(all, op)
			retried++
		}
		e.check(t, round, all)
		t.Logf("round %d: killed after %d acknowledged writes (%d in all), %d in flight sent again; all present", round, n, len(all), retried)
	}
	kinds := map[string]int{}
	for _, op := range all {
		kinds[op.kind]++
	}
	t.Logf("%d rounds of kill -9: %d acknowledged writes, none lost: %v", rounds, len(all), kinds)
}

// check holds the data directory to every acknowledged write, gap-free seqs, an intact
// file and stable idempotent answers.
func (e *crashEnv) check(t *testing.T, round int, all []*crashOp) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.data, "agentdesk.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("round %d: integrity_check %q %v", round, check, err)
	}
	var minSeq, maxSeq, count, counter int64
	if err := db.QueryRow(`SELECT min(seq), max(seq), count(*), (SELECT event_seq FROM projects WHERE id = ?) FROM events WHERE project_id = ?`,
		e.project, e.project).Scan(&minSeq, &maxSeq, &count, &counter); err != nil {
		t.Fatal(err)
	}
	if minSeq != 1 || maxSeq != count || counter != maxSeq {
		t.Fatalf("round %d: event seqs %d..%d, %d events, the project's counter at %d: not gap-free", round, minSeq, maxSeq, count, counter)
	}
	exists := func(q string, args ...any) bool {
		var one int
		err := db.QueryRow(q, args...).Scan(&one)
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		return err == nil
	}
	for _, op := range all {
		var ok bool
		switch op.kind {
		case "task":
			ok = exists(`SELECT 1 FROM tasks WHERE id = ? AND json_array_length(steps) = 2`, op.id)
		case "callback":
			ok = exists(`SELECT 1 FROM task_messages WHERE task_id = ? AND role = 'assistant' AND content = ?`, op.id, op.want)
		case "respond":
			ok = exists(`SELECT 1 FROM task_messages WHERE task_id = ? AND role = 'user' AND content = ?`, op.id, op.want)
		case "message":
			ok = exists(`SELECT 1 FROM messages WHERE id = ? AND content = ?`, op.id, op.want)
		case "document":
			ok = exists(`SELECT 1 FROM documents WHERE id = ? AND content = CAST(? AS BLOB)`, op.id, op.want)
		case "knowledge":
			ok = exists(`SELECT 1 FROM vector_documents WHERE id = ? AND space_id = ?`, op.id, e.spaceID)
		case "jobrun":
			ok = exists(`SELECT 1 FROM job_runs WHERE id = ? AND job_id = ?`, op.id, e.jobID)
		}
		if !ok {
			t.Fatalf("round %d: the acknowledged %s %s (id %d) is not there after kill -9", round, op.kind, op.key, op.id)
		}
	}
	// Idempotency-Keys sent again: the first answer, whatever happened since. (This
	// round's and a sample of the earlier ones.)
	for i, op := range all {
		if op.key == "" || (!strings.HasPrefix(op.key, fmt.Sprintf("r%d-", round)) && i%10 != 0) {
			continue
		}
		status, b, err := e.send(op)
		if err != nil {
			t.Fatal(err)
		}
		var first, again any
		json.Unmarshal(op.answer, &first)
		json.Unmarshal(b, &again)
		if status != op.status || !reflect.DeepEqual(first, again) {
			t.Fatalf("round %d: Idempotency-Key %s answered %d %s, first %d %s", round, op.key, status, b, op.status, op.answer)
		}
	}
}
