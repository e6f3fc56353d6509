// Package testenv starts a real agentdesk server for tests: a real SQLite file in a
// temporary directory (or a real PostgreSQL database: StartOn, with pgtest.Engines),
// the real router, listening on 127.0.0.1. Tests talk to it over HTTP like any client;
// nothing is mocked.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func init() {
	// One info line per request floods `go test -v`; warnings and errors still show.
	slog.SetLogLoggerLevel(slog.LevelWarn)
}

// Env is a running server and what a test needs to call it.
type Env struct {
	URL     string
	DataDir string
	DB      store.Location // the engine the server runs on
	Server  *server.Server
	Service *service.Service
	Client  *http.Client
	// Project is the Personal project created on first start.
	Project model.Project
}

// Start runs a server for the test and stops it (gracefully) when the test ends.
func Start(t testing.TB) *Env {
	t.Helper()
	return StartWith(t, server.Config{})
}

// StartOn is Start on a new database of the engine, "sqlite" or "postgres" (whose
// database pgtest.DB makes); with pgtest.Engines a test runs on both engines:
//
//	func TestX(t *testing.T) { pgtest.Engines(t, testX) }
//	func testX(t *testing.T, engine string) { e := testenv.StartOn(t, engine); ... }
func StartOn(t testing.TB, engine string) *Env {
	t.Helper()
	return StartWith(t, server.Config{DB: ParseDB(t, pgtest.DBFor(t, engine, MigratePostgres))})
}

// StartWithOn is StartWith on a new database of the engine (StartOn).
func StartWithOn(t testing.TB, engine string, cfg server.Config) *Env {
	t.Helper()
	cfg.DB = ParseDB(t, pgtest.DBFor(t, engine, MigratePostgres))
	return StartWith(t, cfg)
}

// OpenStore opens a store on a new database of the engine ("sqlite": in a temporary
// directory; "postgres": pgtest.Migrated). The caller closes it.
func OpenStore(t testing.TB, engine string, opts store.Options) *store.Store {
	t.Helper()
	st, err := store.OpenLocation(context.Background(), ParseDB(t, pgtest.DBFor(t, engine, MigratePostgres)), t.TempDir()+"/agentdesk.db", opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// MigratePostgres brings the schema of a new PostgreSQL test database up to date, for
// pgtest.Migrated.
func MigratePostgres(url string) error {
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		return err
	}
	return db.Close()
}

// ParseDB reads a test's db ("" or a postgres:// URL) as --db does.
func ParseDB(t testing.TB, db string) store.Location {
	t.Helper()
	loc, err := store.ParseDB(db)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// StartWith is Start with a configuration of the test's own (a clock, an embedder): the
// data directory defaults to a temporary one, and the address is always loopback.
func StartWith(t testing.TB, cfg server.Config) *Env {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Addr = "127.0.0.1:0"
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	e := &Env{URL: srv.URL(), DataDir: cfg.DataDir, DB: cfg.DB, Server: srv, Service: srv.Service,
		Client: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	projects, err := srv.Service.Projects(context.Background(), auth.Owner(""))
	if err != nil || len(projects) != 1 {
		t.Fatalf("default project: %v %v", projects, err)
	}
	e.Project = projects[0]
	return e
}

// NewProject creates another project.
func (e *Env) NewProject(t testing.TB, name string) *model.Project {
	t.Helper()
	p, err := e.Service.CreateProject(context.Background(), auth.Owner(""), name, "")
	if err != nil {
		t.Fatalf("create project: %v", err)
	}
	return p
}

// Token creates a platform token of the project with the given scopes.
func (e *Env) Token(t testing.TB, projectID string, scopes ...string) string {
	t.Helper()
	return e.TypedToken(t, projectID, model.TokenPlatform, scopes...)
}

// TypedToken creates a token of the given type.
func (e *Env) TypedToken(t testing.TB, projectID, typ string, scopes ...string) string {
	t.Helper()
	v, _, err := e.Service.CreateToken(context.Background(), auth.Owner(projectID),
		service.CreateTokenInput{Name: "test", Type: typ, Scopes: scopes})
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return v
}

// Agent registers an agent in the project.
func (e *Env) Agent(t testing.TB, projectID, name string) *model.Agent {
	t.Helper()
	a, err := e.Service.CreateAgent(context.Background(), auth.Owner(projectID), name)
	if err != nil {
		t.Fatalf("create agent: %v", err)
	}
	return a
}

// AgentHeaders are the headers an agent of the project sends.
func (e *Env) AgentHeaders(t testing.TB, projectID, agentName string) http.Header {
	t.Helper()
	p, err := e.Service.Project(context.Background(), auth.Owner(""), projectID)
	if err != nil {
		t.Fatalf("load project: %v", err)
	}
	h := http.Header{}
	h.Set("X-Task-Authorization", auth.AgentDigest(p.ID, p.TokenSecret))
	h.Set("X-Task-Namespace", p.Namespace)
	h.Set("X-Agent-Name", agentName)
	return h
}

// Response is an answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test if it is not JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// ErrorCode is the error envelope's code, or "" when the body is not an error.
func (r *Response) ErrorCode() string {
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &body)
	return body.Error.Code
}

// Request describes one call. Body may be a string or []byte (sent as is) or any value
// (sent as JSON). Token, if set, is sent as a Bearer token.
type Request struct {
	Method, Path, Token string
	Body                any
	Header              http.Header
}

// Do sends the request and reads the whole answer.
func (e *Env) Do(t testing.TB, r Request) *Response {
	t.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = bytes.NewBufferString(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode body: %v", err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(r.Method, e.URL+r.Path, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}
