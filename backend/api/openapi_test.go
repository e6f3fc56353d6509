package api_test

import (
	"encoding/json"
	"fmt"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// The openapi_*_test.go tests hold the OpenAPI document (openapi.json) and the server to
// each other: the document must be a valid OpenAPI 3.1 document, describe exactly the
// routes the router registers, agree with the bounds in the Go code, and every real
// answer of the real server must match it (status documented, headers and body valid
// under JSON Schema 2020-12). Every status the document promises must be produced by
// at least one scenario, so that the document cannot promise what the server never does.

// oaBrokenScenarios run against a server whose database has gone away: the 503 of the
// health check and the 500 of every operation that documents one.
func oaBrokenScenarios() []oaCase {
	internal := func(name, method, path, auth, body string) oaCase {
		return oaCase{name: name, method: method, path: path, auth: auth, body: body, status: 500, code: "internal"}
	}
	upload, uploadHeader := oaMultipart([4]string{"file", "a.txt", "text/plain", "a"})
	return []oaCase{
		{name: "health without database", method: "GET", path: "/healthz", auth: "none", status: 503},
		internal("list", "GET", "/api/tasks", "ro", ""),
		internal("create", "POST", "/api/tasks", "wo", `{"summary":"s"}`),
		internal("delete done", "DELETE", "/api/tasks/done", "wo", ""),
		internal("backup", "GET", "/api/backup", "desktop", ""),
		internal("about", "GET", "/api/about", "ro", ""),
		internal("me", "GET", "/api/me", "ro", ""),
		internal("search", "GET", "/api/search?q=x", "all", ""),
		internal("mentions", "GET", "/api/projects/{project}/mentions", "mr", ""),
		internal("get", "GET", "/api/tasks/1", "ro", ""),
		internal("delete", "DELETE", "/api/tasks/1", "wo", ""),
		internal("status", "PUT", "/api/tasks/1/status", "wo", `{"status":"Done"}`),
		internal("agent", "PUT", "/api/tasks/1/agent", "wo", `{"agent_id":null}`),
		internal("edit", "PATCH", "/api/tasks/1", "wo", `{"summary":"s"}`),
		internal("step", "PUT", "/api/tasks/1/steps/0/status", "wo", `{"status":"completed"}`),
		internal("respond", "POST", "/api/tasks/1/respond", "wo", `{"response":"x"}`),
		internal("comment", "POST", "/api/tasks/1/comments", "wo", `{"content":"x"}`),
		internal("callback", "POST", "/api/agent_callback/1", "agent", `{"project_id":"{project}"}`),
		internal("project list", "GET", "/api/projects/{project}/tasks", "agent", ""),
		internal("project create", "POST", "/api/projects/{project}/tasks", "agent", `{"summary":"s"}`),
		internal("counts", "GET", "/api/tasks/counts", "ro", ""),
		internal("waiting for", "GET", "/api/waiting-for", "ro", ""),
		internal("project counts", "GET", "/api/projects/{project}/tasks/counts", "agent", ""),
		internal("project get", "GET", "/api/projects/{project}/tasks/1", "ro", ""),
		internal("conversations list", "GET", "/api/projects/{project}/conversations", "mr", ""),
		internal("conversation create", "POST", "/api/projects/{project}/conversations", "mw", `{"message":"m"}`),
		internal("conversation get", "GET", "/api/projects/{project}/conversations/1", "agent", ""),
		internal("messages list", "GET", "/api/projects/{project}/conversations/1/messages", "mr", ""),
		internal("message post", "POST", "/api/projects/{project}/conversations/1/messages", "agent", `{"message":"m"}`),
		internal("conversation mark read", "PUT", "/api/projects/{project}/conversations/1/read", "mr", `{"lastReadMessageId":1}`),
		internal("conversation tasks", "GET", "/api/projects/{project}/conversations/1/tasks", "all", ""),
		internal("documents list", "GET", "/api/projects/{project}/conversations/1/documents", "mr", ""),
		{name: "document upload", method: "POST", path: "/api/projects/{project}/conversations/1/documents", auth: "mw", body: upload, header: uploadHeader, status: 500, code: "internal"},
		internal("document download", "GET", "/api/projects/{project}/conversations/1/documents/1", "mr", ""),
		{name: "events", method: "GET", path: "/api/events", auth: "ro", header: oaHandshake(), status: 500, code: "internal"},
		internal("start a session", "POST", "/api/session", "rw", ""),
		internal("sign out", "POST", "/logout", "made-session", ""),
		internal("sessions", "GET", "/api/me/sessions", "made-session", ""),
		internal("end a session", "DELETE", "/api/me/sessions/1", "made-session", ""),
		internal("sign out everywhere", "DELETE", "/api/me/sessions", "made-session", ""),
	}
}

// TestOpenAPIScenarios sends real requests to a real server (real SQLite file,
// 127.0.0.1) and checks every request and answer against openapi.json.
func TestOpenAPIScenarios(t *testing.T) { pgtest.Engines(t, testOpenAPIScenarios) }

func testOpenAPIScenarios(t *testing.T, engine string) {
	doc := oaLoad(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	covered := map[string]bool{}

	h := newOAHarness(t, engine, router, covered)
	names := map[string]bool{}
	for _, c := range slices.Concat(oaScenarios(), oaConversationScenarios(), oaEventScenarios(), oaServiceScenarios(), oaVectorScenarios(), oaSessionScenarios(), oaSearchScenarios(), oaMentionScenarios()) {
		if names[c.name] {
			t.Fatalf("two scenarios are called %q", c.name)
		}
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			if c.postgres != nil { // each engine's run counts the other's answer as covered (literal paths only)
				if engine == "sqlite" {
					covered[fmt.Sprintf("%s %s %d", c.method, c.path, c.postgres.status)] = true
				} else {
					covered[fmt.Sprintf("%s %s %d", c.method, c.path, c.status)] = true
					c.status, c.code, c.check = c.postgres.status, c.postgres.code, c.postgres.check
				}
			}
			h.call(t, c, map[string]int64{})
		})
	}

	// Unknown paths under /api are no operation, but answer 404 in the error envelope.
	t.Run("unknown api path", func(t *testing.T) {
		r := h.env.Do(t, testenv.Request{Method: "GET", Path: "/api/nothing", Token: h.tokens["rw"]})
		if r.Status != http.StatusNotFound || r.ErrorCode() != "not_found" {
			t.Fatalf("GET /api/nothing: %d %s", r.Status, r.Body)
		}
		var body any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if err := doc.Components.Schemas["Error"].Value.VisitJSON(body, oaSchemaOptions...); err != nil {
			t.Fatalf("the 404 of an unknown path is not the Error envelope: %v", err)
		}
	})

	t.Run("database gone", func(t *testing.T) {
		broken := newOAHarness(t, engine, router, covered)
		if err := broken.env.Service.Store().Close(); err != nil {
			t.Fatalf("close the database: %v", err)
		}
		for _, c := range slices.Concat(oaBrokenScenarios(), oaVectorBrokenScenarios()) {
			t.Run(c.name, func(t *testing.T) { broken.call(t, c, map[string]int64{}) })
		}
	})

	// Every status the document promises must have been answered by some scenario, but
	// for the answers every operation shares: they come from routing, the rate limit and
	// the store's state, not from the operation (TestOpenAPISharedAnswers).
	for key, op := range oaOperations(doc) {
		method, path, _ := strings.Cut(key, " ")
		for code, r := range op.Responses.Map() {
			if !covered[method+" "+path+" "+code] && !oaSharedResponses[strings.TrimPrefix(r.Ref, "#/components/responses/")] {
				t.Errorf("openapi.json documents %s %s answering %s, but no scenario produced it", method, path, code)
			}
		}
	}
}
