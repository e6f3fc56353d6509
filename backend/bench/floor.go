package main

// The floor: the least a server can do for a create on this machine, run beside
// agentdesk in the same bench, so that the distance to the limit is one number
// (creates_share_of_floor). It answers POST /api/tasks as agentdesk does, and nothing
// else (but GET /healthz):
//
//   - net/http; the bearer token compared with the one it was started with (agentdesk
//     looks its tokens up in the database);
//   - the same body decoded into the same fields and validated by the same limits
//     (service.MaxSummaryLen and the rest);
//   - the task (its steps in the row, as agentdesk keeps them) and one event row written
//     through one writer goroutine that commits whatever is queued in one transaction
//     (group commit), SQLite in WAL mode with the server's --synchronous (FULL by
//     default: the WAL is fsynced before any answer, as agentdesk does);
//   - the task answered as the same JSON (model.Task), 201;
//   - GET /api/events, a WebSocket of the creates' events (the fan-out phase's floor):
//     right after a batch's commit, each event's frame is written on every socket by as
//     many goroutines as cores, and then the batch's creates are answered: agentdesk's
//     order (backend/events/direct.go, Hub.AwaitDelivery), without its reading the
//     events back, its checks of each subscriber, or its queue for a socket that is
//     not idle.
//
// The bench runs it as a child process of its own binary (`bench -floor-serve ADDR
// -floor-data DIR`), so that it is measured as agentdesk is: its CPU from /proc, its
// own cores to share.

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	_ "modernc.org/sqlite" // the driver agentdesk uses

	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// floorTokenEnv names the floor's one token, given to it in AGENTDESK_FLOOR_TOKEN.
const floorTokenEnv = "AGENTDESK_FLOOR_TOKEN"

// floorProject and floorAgent are the project and the one agent the floor's tasks go to.
const (
	floorProject = "floor"
	floorAgent   = 1
)

// floorCreate is one create waiting for the writer: the task to write, and where to
// say how it went.
type floorCreate struct {
	task  *model.Task
	json  []byte // the task's JSON, once written: the answer
	event []byte // its event's WebSocket frame, once written
	done  chan error
}

// serveFloor runs the floor server on addr with its database in dir until SIGTERM.
func serveFloor(addr, dir, synchronous string) error {
	token := os.Getenv(floorTokenEnv)
	if token == "" {
		return errors.New("no " + floorTokenEnv)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return runFloor(ctx, ln, dir, synchronous, token)
}

// runFloor serves the floor on ln until ctx ends.
func runFloor(ctx context.Context, ln net.Listener, dir, synchronous, token string) error {
	dsn := "file:" + filepath.Join(dir, "floor.db") + "?_pragma=journal_mode(WAL)&_pragma=synchronous(" + synchronous + ")&_pragma=busy_timeout(5000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the one writer
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS tasks (id INTEGER PRIMARY KEY, project_id TEXT NOT NULL,
		agent_id INTEGER, summary TEXT NOT NULL, details TEXT NOT NULL, steps TEXT NOT NULL, status TEXT NOT NULL,
		created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
	CREATE TABLE IF NOT EXISTS events (project_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
		at TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (project_id, seq))`); err != nil {
		return err
	}
	queue := make(chan *floorCreate, 1024)
	hub := &floorHub{sockets: map[net.Conn]struct{}{}, batches: make(chan floorBatch, 1024)}
	go hub.run()
	go floorWriter(db, queue, hub)

	authorized := func(w http.ResponseWriter, r *http.Request) bool {
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(given), []byte(token)) != 1 {
			floorError(w, http.StatusUnauthorized, "unknown token")
			return false
		}
		return true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /api/events", func(w http.ResponseWriter, r *http.Request) {
		if authorized(w, r) {
			hub.subscribe(w, r)
		}
	})
	mux.HandleFunc("POST /api/tasks", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(w, r) {
			return
		}
		task, err := floorDecode(r.Body)
		if err != nil {
			floorError(w, http.StatusBadRequest, err.Error())
			return
		}
		c := &floorCreate{task: task, done: make(chan error, 1)}
		queue <- c
		if err := <-c.done; err != nil {
			floorError(w, http.StatusInternalServerError, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusCreated)
		w.Write(c.json)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// floorDecode decodes and validates a create's body, by the rules agentdesk's service
// applies to the fields the bench sends.
func floorDecode(body io.Reader) (*model.Task, error) {
	var in struct {
		Summary string `json:"summary"`
		Details string `json:"details"`
		Steps   []struct {
			Title string `json:"title"`
		} `json:"steps"`
		AgentID *int64 `json:"agent_id"`
	}
	dec := json.NewDecoder(io.LimitReader(body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("the body is not a create: %w", err)
	}
	switch {
	case strings.TrimSpace(in.Summary) == "" || utf8.RuneCountInString(in.Summary) > service.MaxSummaryLen:
		return nil, fmt.Errorf("summary: 1 to %d characters", service.MaxSummaryLen)
	case utf8.RuneCountInString(in.Details) > service.MaxDetailsLen:
		return nil, fmt.Errorf("details: at most %d characters", service.MaxDetailsLen)
	case len(in.Steps) > service.MaxSteps:
		return nil, fmt.Errorf("at most %d steps", service.MaxSteps)
	case in.AgentID != nil && *in.AgentID != floorAgent:
		return nil, errors.New("no such agent")
	}
	now := time.Now().UTC()
	t := &model.Task{ProjectID: floorProject, AgentID: in.AgentID, Summary: in.Summary, Details: in.Details,
		Steps: make([]model.Step, len(in.Steps)), Status: "Todo", Source: "user", TaskType: "standard",
		RequiredSkills: []string{}, CreatedAt: now, UpdatedAt: now}
	for i, s := range in.Steps {
		if strings.TrimSpace(s.Title) == "" {
			return nil, fmt.Errorf("steps[%d].title is empty", i)
		}
		t.Steps[i] = model.Step{Title: s.Title, Status: "pending"}
	}
	return t, nil
}

// floorWriter writes the queued creates: it takes the first one waiting, then whatever
// else is queued by then, writes them all in one transaction and answers them after
// its commit (one fsync for the batch).
func floorWriter(db *sql.DB, queue <-chan *floorCreate, hub *floorHub) {
	var seq int64 // the project's last event seq: this writer is the only one
	_ = db.QueryRow(`SELECT coalesce(max(seq), 0) FROM events WHERE project_id = $1`, floorProject).Scan(&seq)
	batch := make([]*floorCreate, 0, 256)
	for first := range queue {
		batch = append(batch[:0], first)
	more:
		for len(batch) < cap(batch) {
			select {
			case c := <-queue:
				batch = append(batch, c)
			default:
				break more
			}
		}
		err := floorWrite(db, batch, &seq)
		if err == nil {
			frames := make([][]byte, len(batch))
			for i, c := range batch {
				frames[i] = c.event
			}
			written := make(chan struct{})
			hub.batches <- floorBatch{frames, written}
			<-written // answered once every socket has its events
		}
		for _, c := range batch {
			c.done <- err
		}
	}
}

// floorWrite writes one batch of creates in one transaction: each task, then its event.
func floorWrite(db *sql.DB, batch []*floorCreate, seq *int64) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	next := *seq
	for _, c := range batch {
		t := c.task
		steps, _ := json.Marshal(t.Steps)
		at := t.CreatedAt.Format(time.RFC3339Nano)
		if err := tx.QueryRow(`INSERT INTO tasks (project_id, agent_id, summary, details, steps, status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id`,
			t.ProjectID, t.AgentID, t.Summary, t.Details, steps, t.Status, at).Scan(&t.ID); err != nil {
			return err
		}
		next++
		// The task's JSON as agentdesk writes it, answer and event data alike.
		if c.json, err = t.AppendJSON(nil); err != nil {
			return err
		}
		data, err := model.TaskEvent{Task: t}.AppendJSON(nil)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO events (project_id, seq, type, at, data) VALUES ($1, $2, 'task.created', $3, $4)`,
			t.ProjectID, next, at, data); err != nil {
			return err
		}
		event, err := json.Marshal(model.Event{Seq: next, Type: "task.created", ProjectID: t.ProjectID, At: t.CreatedAt, Data: json.RawMessage(data)})
		if err != nil {
			return err
		}
		c.event = events.TextFrame(event)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	*seq = next
	return nil
}

// floorError answers an error in agentdesk's envelope.
func floorError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": http.StatusText(status), "message": msg}})
}

// floorHub is the floor's event stream: its sockets, and the committed batches' event
// frames to write on them.
type floorHub struct {
	mu      sync.Mutex
	sockets map[net.Conn]struct{}
	batches chan floorBatch
}

// floorBatch is a committed batch's event frames, and a channel closed once they are
// written on every socket.
type floorBatch struct {
	frames  [][]byte
	written chan struct{}
}

// subscribe upgrades the request to a WebSocket and holds it until the client leaves.
func (h *floorHub) subscribe(w http.ResponseWriter, r *http.Request) {
	c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	conn := c.NetConn()
	h.mu.Lock()
	h.sockets[conn] = struct{}{}
	h.mu.Unlock()
	go func() {
		// Read until the client goes: the bench sends nothing but its close.
		for {
			if _, _, err := c.NextReader(); err != nil {
				break
			}
		}
		h.mu.Lock()
		delete(h.sockets, conn)
		h.mu.Unlock()
		conn.Close()
	}()
}

// run writes each batch's event frames on every socket, the sockets shared among as
// many goroutines as cores.
func (h *floorHub) run() {
	for batch := range h.batches {
		frames := batch.frames
		h.mu.Lock()
		sockets := make([]net.Conn, 0, len(h.sockets))
		for conn := range h.sockets {
			sockets = append(sockets, conn)
		}
		h.mu.Unlock()
		workers := min(runtime.GOMAXPROCS(0), len(sockets))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for _, frame := range frames {
					for i := w; i < len(sockets); i += workers {
						sockets[i].Write(frame) // a socket that fails is closed by its reader
					}
				}
			})
		}
		wg.Wait()
		close(batch.written)
	}
}
