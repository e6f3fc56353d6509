package api_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// The tests in this file hold the OpenAPI document (openapi.json) and the server to
// each other: the document must be a valid OpenAPI 3.1 document, describe exactly the
// routes the router registers, agree with the bounds in the Go code, and every real
// answer of the real server must match it (status documented, headers and body valid
// under JSON Schema 2020-12). Every status the document promises must be produced by
// at least one scenario, so that the document cannot promise what the server never does.

// loadOpenAPI parses the embedded document and validates it as OpenAPI 3.1.
func oaLoad(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(api.OpenAPIDocument())
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi.json declares version %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
	return doc
}

// oaSchemaOptions are the schema validation options for 3.1: JSON Schema 2020-12.
// (openapi3filter adds EnableJSONSchema2020 itself for 3.1 documents; saying it here
// keeps the tests honest should that ever change.)
var oaSchemaOptions = []openapi3.SchemaValidationOption{openapi3.EnableJSONSchema2020()}

// oaOperations lists the document's operations as "METHOD /path".
func oaOperations(doc *openapi3.T) map[string]*openapi3.Operation {
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = op
		}
	}
	return ops
}

var oaGinParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// TestOpenAPIRoutesMatchRouter checks that the document describes exactly the routes
// that the router registers: no route undocumented, no documented route missing.
func TestOpenAPIRoutesMatchRouter(t *testing.T) {
	doc := oaLoad(t)
	env := testenv.Start(t)
	routes := map[string]bool{}
	for _, r := range api.NewRouter(env.Service, env.Server.Hub, nil).Routes() {
		if r.Path == "/graphql" {
			continue // GraphQL is not REST: its schema is backend/graphql/schema.graphql, not openapi.json
		}
		routes[r.Method+" "+oaGinParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented := map[string]bool{}
	for key := range oaOperations(doc) {
		documented[key] = true
	}
	if len(routes) == 0 {
		t.Fatal("the router registers no routes")
	}
	for _, key := range slices.Sorted(maps.Keys(routes)) {
		if !documented[key] {
			t.Errorf("route %s is registered in router.go but not described in openapi.json", key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(documented)) {
		if !routes[key] {
			t.Errorf("openapi.json describes %s, which router.go does not register", key)
		}
	}
}

// TestOpenAPIServedDocument checks that GET /api/openapi.json serves the embedded
// document as it is.
func TestOpenAPIServedDocument(t *testing.T) {
	env := testenv.Start(t)
	r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/openapi.json"})
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/openapi.json: %d", r.Status)
	}
	if !bytes.Equal(r.Body, api.OpenAPIDocument()) {
		t.Fatal("GET /api/openapi.json does not serve the embedded document")
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
}

// oaSchema returns a component schema, failing the test when it is missing.
func oaSchema(t *testing.T, doc *openapi3.T, name string) *openapi3.Schema {
	t.Helper()
	ref := doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		t.Fatalf("openapi.json has no schema %s", name)
	}
	return ref.Value
}

func oaProp(t *testing.T, s *openapi3.Schema, name string) *openapi3.Schema {
	t.Helper()
	p := s.Properties[name]
	if p == nil || p.Value == nil {
		t.Fatalf("schema has no property %s", name)
	}
	return p.Value
}

func oaStrings(vs []any) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// oaIsErrorSchema reports whether s is the shared Error envelope or an allOf built on it.
func oaIsErrorSchema(ref *openapi3.SchemaRef) bool {
	if ref == nil {
		return false
	}
	if ref.Ref == "#/components/schemas/Error" {
		return true
	}
	if ref.Value == nil {
		return false
	}
	return slices.ContainsFunc(ref.Value.AllOf, oaIsErrorSchema)
}

// TestOpenAPIDocumentMatchesCode checks the document against the Go code: bounds,
// enums, the error envelope and the shape every operation must have.
func TestOpenAPIDocumentMatchesCode(t *testing.T) {
	doc := oaLoad(t)

	// Bounds of service/tasks.go.
	maxLen := func(s *openapi3.Schema) int {
		if s.MaxLength == nil {
			return -1
		}
		return int(*s.MaxLength)
	}
	create := oaSchema(t, doc, "CreateTaskRequest")
	task := oaSchema(t, doc, "Task")
	bounds := []struct {
		what      string
		got, want int
	}{
		{"CreateTaskRequest.summary maxLength", maxLen(oaProp(t, create, "summary")), service.MaxSummaryLen},
		{"CreateTaskRequest.details maxLength", maxLen(oaProp(t, create, "details")), service.MaxDetailsLen},
		{"CreateTaskRequest.taskType maxLength", maxLen(oaProp(t, create, "taskType")), service.MaxTaskTypeLen},
		{"StepInput.title maxLength", maxLen(oaProp(t, oaSchema(t, doc, "StepInput"), "title")), service.MaxStepLen},
		{"RespondRequest.response maxLength", maxLen(oaProp(t, oaSchema(t, doc, "RespondRequest"), "response")), service.MaxResponseLen},
		{"SetStatusRequest.waiting_details maxLength", maxLen(oaProp(t, oaSchema(t, doc, "SetStatusRequest"), "waiting_details")), service.MaxResponseLen},
		{"SetStatusRequest.waitingDetails maxLength", maxLen(oaProp(t, oaSchema(t, doc, "SetStatusRequest"), "waitingDetails")), service.MaxResponseLen},
		{"Task.summary maxLength", maxLen(oaProp(t, task, "summary")), service.MaxSummaryLen},
		{"Task.details maxLength", maxLen(oaProp(t, task, "details")), service.MaxDetailsLen},
		{"Task.taskType maxLength", maxLen(oaProp(t, task, "taskType")), service.MaxTaskTypeLen},
		{"Task.waiting_details maxLength", maxLen(oaProp(t, task, "waiting_details")), service.MaxResponseLen},
		{"Step.title maxLength", maxLen(oaProp(t, oaSchema(t, doc, "Step"), "title")), service.MaxStepLen},
		// Bounds of service/conversations.go.
		{"CreateConversationRequest.message maxLength", maxLen(oaProp(t, oaSchema(t, doc, "CreateConversationRequest"), "message")), service.MaxMessageLen},
		{"CreateConversationRequest.content maxLength", maxLen(oaProp(t, oaSchema(t, doc, "CreateConversationRequest"), "content")), service.MaxMessageLen},
		{"CreateConversationRequest.name maxLength", maxLen(oaProp(t, oaSchema(t, doc, "CreateConversationRequest"), "name")), service.MaxConversationNameLen},
		{"PostMessageRequest.message maxLength", maxLen(oaProp(t, oaSchema(t, doc, "PostMessageRequest"), "message")), service.MaxMessageLen},
		{"PostMessageRequest.content maxLength", maxLen(oaProp(t, oaSchema(t, doc, "PostMessageRequest"), "content")), service.MaxMessageLen},
		{"Message.content maxLength", maxLen(oaProp(t, oaSchema(t, doc, "Message"), "content")), service.MaxMessageLen},
		{"Conversation.name maxLength", maxLen(oaProp(t, oaSchema(t, doc, "Conversation"), "name")), service.MaxConversationNameLen},
		{"Document.name maxLength", maxLen(oaProp(t, oaSchema(t, doc, "Document"), "name")), service.MaxDocumentNameLen},
		{"ReactionCount.emoji maxLength", maxLen(oaProp(t, oaSchema(t, doc, "ReactionCount"), "emoji")), service.MaxEmojiLen},
		{"ReactionEvent.emoji maxLength", maxLen(oaProp(t, oaSchema(t, doc, "ReactionEvent"), "emoji")), service.MaxEmojiLen},
	}
	if m := oaProp(t, oaSchema(t, doc, "Document"), "size").Max; m == nil || int(*m) != service.MaxDocumentSize {
		t.Errorf("Document.size maximum is %v, want %d", m, service.MaxDocumentSize)
	}
	if d := doc.Components.Responses["DocumentTooLarge"].Value.Description; d == nil || !strings.Contains(*d, strconv.Itoa(service.MaxDocumentSize)) {
		t.Errorf("the 413 of uploads does not state the document limit of %d bytes", service.MaxDocumentSize)
	}
	if m := oaProp(t, create, "steps").MaxItems; m == nil || int(*m) != service.MaxSteps {
		t.Errorf("CreateTaskRequest.steps maxItems is %v, want %d", m, service.MaxSteps)
	}
	for _, b := range bounds {
		if b.got != b.want {
			t.Errorf("%s is %d in openapi.json, %d in the code", b.what, b.got, b.want)
		}
	}
	limit := doc.Components.Parameters["Limit"].Value.Schema.Value
	if limit.Min == nil || *limit.Min != 1 || limit.Max == nil || int(*limit.Max) != service.MaxListLimit {
		t.Errorf("limit parameter bounds %v..%v, want 1..%d", limit.Min, limit.Max, service.MaxListLimit)
	}
	if api.MaxJSONBody != 1<<20 {
		t.Errorf("MaxJSONBody is %d; openapi.json says 1 MiB", api.MaxJSONBody)
	}
	if d := doc.Components.Responses["PayloadTooLarge"].Value.Description; d == nil || !strings.Contains(*d, strconv.Itoa(api.MaxJSONBody)) {
		t.Errorf("the 413 response does not state the body limit of %d bytes", api.MaxJSONBody)
	}

	// Enums.
	if got := oaStrings(oaSchema(t, doc, "TaskStatus").Enum); !slices.Equal(got, model.TaskStatuses) {
		t.Errorf("TaskStatus enum %v, the code has %v", got, model.TaskStatuses)
	}
	for _, s := range oaStrings(oaSchema(t, doc, "StepStatus").Enum) {
		if stored, ok := model.ParseStepStatus(s); !ok || stored != s {
			t.Errorf("StepStatus %q is not a stored step status", s)
		}
	}
	for _, s := range oaStrings(oaSchema(t, doc, "StepStatusInput").Enum) {
		if _, ok := model.ParseStepStatus(s); !ok {
			t.Errorf("StepStatusInput %q is refused by the code", s)
		}
	}
	for _, s := range []string{"pending", "in_progress", "completed", "skipped", "Todo", "Doing", "Done"} {
		if !slices.Contains(oaStrings(oaSchema(t, doc, "StepStatusInput").Enum), s) {
			t.Errorf("StepStatusInput lacks %q, which the contract accepts", s)
		}
	}
	codes := []string{string(errs.InvalidArgument), string(errs.Unauthenticated), string(errs.Forbidden), string(errs.NotFound),
		string(errs.Conflict), string(errs.PreconditionFailed), string(errs.PayloadTooLarge), string(errs.RateLimited), string(errs.MethodNotAllowed), string(errs.Internal)}
	errorCode := oaProp(t, oaProp(t, oaSchema(t, doc, "Error"), "error"), "code")
	if got := oaStrings(errorCode.Enum); !slices.Equal(got, codes) {
		t.Errorf("Error code enum %v, want %v", got, codes)
	}
	if got, want := oaStrings(oaSchema(t, doc, "ActorKind").Enum), []string{model.ActorUser, model.ActorAgent}; !slices.Equal(got, want) {
		t.Errorf("ActorKind enum %v, the code has %v", got, want)
	}
	// Every event type the service writes is documented (agent.created and stream.reset,
	// literals in the code, are checked on real frames by TestOpenAPIEventStream).
	eventTypes := oaStrings(oaSchema(t, doc, "EventType").Enum)
	for _, typ := range []string{service.EventTaskCreated, service.EventTaskUpdated, service.EventTaskDeleted,
		service.EventConversationCreated, service.EventMessageCreated, service.EventDocumentCreated,
		service.EventReactionAdded, service.EventReactionRemoved, service.EventParticipantAdded, service.EventParticipantRemoved,
		service.EventAgentUpdated, service.EventAgentDeleted, service.EventMemberAdded, service.EventMemberUpdated, service.EventMemberRemoved} {
		if !slices.Contains(eventTypes, typ) {
			t.Errorf("EventType lacks %q, which the service writes", typ)
		}
	}

	// The Idempotency-Key header, as service.CheckIdempotencyKey checks it.
	idem := doc.Components.Parameters["IdempotencyKey"].Value
	if idem.In != "header" || idem.Name != "Idempotency-Key" || idem.Schema.Value.Pattern != `^[A-Za-z0-9._:-]{1,128}$` {
		t.Errorf("Idempotency-Key parameter: %s %s pattern %q", idem.In, idem.Name, idem.Schema.Value.Pattern)
	}
	pattern := regexp.MustCompile(idem.Schema.Value.Pattern)
	for _, key := range []string{"a", "key-1.2_3:4", strings.Repeat("k", 128), strings.Repeat("k", 129), "has space", "é", "a/b"} {
		if pattern.MatchString(key) != (service.CheckIdempotencyKey(key) == nil) {
			t.Errorf("Idempotency-Key %q: the document and the code disagree", key)
		}
	}

	// The shape of every operation.
	ops := oaOperations(doc)
	// Conditional requests on one task (api/etag.go): GET sends the ETag and takes
	// If-None-Match; every change of one task takes If-Match.
	for _, key := range []string{"GET /api/tasks/{id}", "GET /api/projects/{projectId}/tasks/{id}"} {
		op := ops[key]
		if op == nil || op.Parameters.GetByInAndName("header", "If-None-Match") == nil || op.Responses.Status(304) == nil ||
			op.Responses.Status(200) == nil || op.Responses.Status(200).Value.Headers["ETag"] == nil {
			t.Errorf("%s does not document If-None-Match, 304 and the ETag of its answer", key)
		}
	}
	for _, key := range []string{"DELETE /api/tasks/{id}", "PUT /api/tasks/{id}/status", "PUT /api/tasks/{id}/agent",
		"PUT /api/tasks/{id}/steps/{stepNum}/status", "POST /api/tasks/{id}/respond", "POST /api/agent_callback/{id}"} {
		op := ops[key]
		if op == nil || op.Parameters.GetByInAndName("header", "If-Match") == nil || op.Responses.Status(412) == nil {
			t.Errorf("%s does not document If-Match and 412", key)
		}
	}
	idempotent := map[string]bool{"POST /api/tasks": true, "POST /api/tasks/{id}/respond": true, "POST /api/agent_callback/{id}": true,
		"POST /api/projects/{projectId}/conversations": true, "POST /api/projects/{projectId}/conversations/{conversationId}/messages": true}
	ids := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(ops)) {
		op := ops[key]
		method, path, _ := strings.Cut(key, " ")
		if op.OperationID == "" {
			t.Errorf("%s has no operationId", key)
		} else if other, dup := ids[op.OperationID]; dup {
			t.Errorf("%s and %s share operationId %s", key, other, op.OperationID)
		}
		ids[op.OperationID] = key
		if op.Responses == nil || op.Responses.Default() != nil {
			t.Errorf("%s: responses must list their status codes, without default", key)
			continue
		}
		security := doc.Security
		if op.Security != nil {
			security = *op.Security
		}
		has := func(status int) bool { return op.Responses.Status(status) != nil }
		if len(security) > 0 {
			for _, status := range []int{401, 403, 500} {
				if !has(status) {
					t.Errorf("%s needs credentials but does not document %d", key, status)
				}
			}
			if r := op.Responses.Status(401); r != nil {
				h := r.Value.Headers["WWW-Authenticate"]
				if h == nil || h.Value == nil || !h.Value.Required {
					t.Errorf("%s: the 401 answer does not document the required WWW-Authenticate header", key)
				}
			}
		}
		if op.RequestBody != nil {
			for _, status := range []int{400, 413} {
				if !has(status) {
					t.Errorf("%s takes a body but does not document %d", key, status)
				}
			}
		}
		if strings.Contains(path, "{id}") && (!has(400) || !has(404)) {
			t.Errorf("%s takes a task id but does not document 400 and 404", key)
		}
		if strings.Contains(path, "{docId}") && (!has(400) || !has(404)) {
			t.Errorf("%s takes a document id but does not document 400 and 404", key)
		}
		if strings.Contains(path, "{conversationId}") && !has(404) {
			t.Errorf("%s takes a conversation but does not document 404", key)
		}
		if strings.Contains(path, "{projectId}") {
			if len(security) != 2 || len(security[0]) != 1 || security[0]["bearerAuth"] == nil || len(security[1]) != 2 ||
				security[1]["agentToken"] == nil || security[1]["agentName"] == nil {
				t.Errorf("%s must accept a Bearer token or the agent headers, has %v", key, security)
			}
		}
		if idempotent[key] && op.Parameters.GetByInAndName("header", "Idempotency-Key") == nil {
			t.Errorf("%s does not document the Idempotency-Key header", key)
		}
		for code, r := range op.Responses.Map() {
			status, _ := strconv.Atoi(code)
			if status < 400 || path == "/healthz" {
				continue
			}
			mt := r.Value.Content.Get("application/json")
			if mt == nil || !oaIsErrorSchema(mt.Schema) {
				t.Errorf("%s: the %s answer is not the shared Error envelope", key, code)
			}
		}
		if method == "GET" && (strings.HasSuffix(path, "/tasks") || op.Parameters.GetByInAndName("query", "limit") != nil) {
			if r := op.Responses.Status(200); r == nil || r.Value.Headers["Link"] == nil {
				t.Errorf("%s: the list answer does not document the Link header", key)
			}
		}
	}
	for key := range idempotent {
		if ops[key] == nil {
			t.Errorf("%s takes an Idempotency-Key but is not in openapi.json", key)
		}
	}
}

// oaReq says what the document must think of a scenario's request.
type oaReq int

const (
	oaValid     oaReq = iota // the document must accept the request (it may still fail for a reason the document cannot express)
	oaInvalid                // the document must reject it (bad input, missing or insufficient credentials)
	oaUnchecked              // not checked: the document's verdict is beside the point (the 1 MiB byte limit of JSON bodies)
)

// oaCase is one real request and the answer it must get.
type oaCase struct {
	name   string
	method string
	// path, body and header values may hold placeholders: {project} {otherProject}
	// {agent} {otherAgent} {other} (a task of the other project), {origin} (the
	// server's own origin); conversations: {conv} and {convUUID} (with three messages,
	// three documents and three linked tasks), {emptyConv} (one message, nothing else),
	// {otherConv} and {otherConvUUID} (of the other project); documents: {doc}
	// (notes.txt in {conv}), {docUnicode} (résumé.txt in {conv}), {otherDoc} (in
	// {otherConv}); and fresh tasks made for the case alone: {task} (Todo, three pending
	// steps, assigned to the agent), {waiting} (Waiting, waiting_version 1), {done}
	// (Done), {unassigned} (Backlog, no agent); {taskETag} and {waitingETag} are the
	// current ETags of {task} and {waiting}.
	path string
	body string
	// auth: rw ro wo msg mr mw all data admin desktop other otherMsg (Bearer tokens), "query:" and a
	// token name (sent as ?access_token=), agent, agent-bad-digest, agent-unknown,
	// agent-other (agent headers), none, or "raw:" and an Authorization value.
	auth   string
	header map[string]string
	req    oaReq
	status int
	code   string // the error code, "" for success
	check  func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64)
}

// oaResult is a real answer, read whole.
type oaResult struct {
	status int
	header http.Header
	body   []byte
}

func (r *oaResult) object(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, r.body)
	}
	return v
}

func (r *oaResult) list(t *testing.T) []map[string]any {
	t.Helper()
	var v []map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer is not a JSON array of objects: %v: %s", err, r.body)
	}
	return v
}

func (r *oaResult) task(t *testing.T) model.Task {
	t.Helper()
	var v model.Task
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer is not a task: %v: %s", err, r.body)
	}
	return v
}

// oaHarness runs scenarios against one real server.
type oaHarness struct {
	env                   *testenv.Env
	router                routers.Router
	project, otherProject string
	agent, otherAgent     *model.Agent
	otherTask             int64
	conv, emptyConv       *model.Conversation // fixtures of the project: see oaCase
	otherConv             *model.Conversation // of the other project
	doc, docUnicode       int64               // documents of conv
	otherDoc              int64               // a document of otherConv
	tokens                map[string]string   // name -> value
	scopes                map[string][]string // value -> scopes
	agentHeaders          map[string]http.Header
	covered               map[string]bool // "METHOD /path status" answered
}

const oaAgentName = "oa-worker"

func newOAHarness(t *testing.T, router routers.Router, covered map[string]bool) *oaHarness {
	t.Helper()
	env := testenv.Start(t)
	h := &oaHarness{env: env, router: router, project: env.Project.ID, tokens: map[string]string{}, scopes: map[string][]string{},
		agentHeaders: map[string]http.Header{}, covered: covered}
	other := env.NewProject(t, "oa-other")
	h.otherProject = other.ID
	token := func(name, project, typ string, scopes ...string) {
		v := env.TypedToken(t, project, typ, scopes...)
		h.tokens[name], h.scopes[v] = v, scopes
	}
	token("rw", h.project, model.TokenPlatform, auth.TaskRead, auth.TaskWrite)
	token("ro", h.project, model.TokenPlatform, auth.TaskRead)
	token("wo", h.project, model.TokenPlatform, auth.TaskWrite)
	token("msg", h.project, model.TokenPlatform, auth.MessagingRead, auth.MessagingWrite)
	token("mr", h.project, model.TokenPlatform, auth.MessagingRead)
	token("mw", h.project, model.TokenPlatform, auth.MessagingWrite)
	token("all", h.project, model.TokenPlatform, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)
	token("data", h.project, model.TokenData, auth.VectorRead, auth.VectorWrite)
	token("admin", h.project, model.TokenPlatform, auth.TaskRead, auth.Admin)
	token("other", h.otherProject, model.TokenPlatform, auth.TaskRead, auth.TaskWrite)
	token("otherMsg", h.otherProject, model.TokenPlatform, auth.MessagingRead, auth.MessagingWrite)
	sess, err := env.Service.StartDesktopSession(context.Background(), auth.Owner(""))
	if err != nil {
		t.Fatalf("desktop session: %v", err)
	}
	h.tokens["desktop"], h.scopes[sess.Token] = sess.Token, auth.PlatformScopes // the desktop window: the local owner
	h.agent = env.Agent(t, h.project, oaAgentName)
	h.otherAgent = env.Agent(t, h.otherProject, "oa-elsewhere")
	h.agentHeaders[h.project] = env.AgentHeaders(t, h.project, oaAgentName)
	h.agentHeaders[h.otherProject] = env.AgentHeaders(t, h.otherProject, "oa-elsewhere")
	task, err := env.Service.CreateTask(context.Background(), auth.Owner(h.otherProject), service.CreateTaskInput{Summary: "secret"}, "")
	if err != nil {
		t.Fatalf("task of the other project: %v", err)
	}
	h.otherTask = task.ID
	// A few tasks of every kind, so that lists have something to show and to page through.
	for _, kind := range []string{"task", "waiting", "done", "task"} {
		h.freshTask(t, kind)
	}
	h.conversationFixtures(t)
	return h
}

// conversationFixtures makes the conversations and documents of oaCase: enough of each
// for every list to page through at least three items.
func (h *oaHarness) conversationFixtures(t *testing.T) {
	t.Helper()
	ctx, svc := context.Background(), h.env.Service
	owner, otherOwner := auth.Owner(h.project), auth.Owner(h.otherProject)
	text := func(s string) *string { return &s }
	conversation := func(p *auth.Principal, name, message string) *model.Conversation {
		in := service.CreateConversationInput{Message: text(message)}
		if name != "" {
			in.Name = text(name)
		}
		c, err := svc.CreateConversation(ctx, p, in, "")
		if err != nil {
			t.Fatalf("create conversation: %v", err)
		}
		return c
	}
	share := func(p *auth.Principal, c *model.Conversation, name string) int64 {
		d, err := svc.ShareDocument(ctx, p, c.UUID, service.DocumentUpload{Name: name, MimeType: "text/plain", Body: strings.NewReader("some notes")})
		if err != nil {
			t.Fatalf("share %s: %v", name, err)
		}
		return d.ID
	}
	h.conv = conversation(owner, "general", "hello")
	for _, m := range []string{"second", "third"} {
		if _, err := svc.PostMessage(ctx, owner, h.conv.UUID, service.PostMessageInput{Message: text(m)}, ""); err != nil {
			t.Fatalf("post message: %v", err)
		}
	}
	h.doc = share(owner, h.conv, "notes.txt")
	share(owner, h.conv, "plan.md")
	h.docUnicode = share(owner, h.conv, "résumé.txt")
	for i := range 3 {
		in := service.CreateTaskInput{Summary: fmt.Sprintf("oa linked %d", i), ConversationID: model.Ref(strconv.FormatInt(h.conv.ID, 10))}
		if _, err := svc.CreateTask(ctx, owner, in, ""); err != nil {
			t.Fatalf("create linked task: %v", err)
		}
	}
	h.emptyConv = conversation(owner, "", "nothing else here")
	conversation(owner, "spare", "a third conversation")
	h.otherConv = conversation(otherOwner, "secret", "secret")
	h.otherDoc = share(otherOwner, h.otherConv, "secret.txt")
}

// freshTask makes a task of the project: task (Todo with three pending steps, assigned
// to the agent), waiting (the same, then Waiting), done (the same, then Done) or
// unassigned (Backlog, no agent).
func (h *oaHarness) freshTask(t *testing.T, kind string) int64 {
	t.Helper()
	ctx, owner := context.Background(), auth.Owner(h.project)
	in := service.CreateTaskInput{Summary: "oa " + kind, Details: "made by the OpenAPI test",
		Steps: []service.StepInput{{Title: "one"}, {Title: "two"}, {Title: "three"}}, AgentID: &h.agent.ID}
	if kind == "unassigned" {
		in.AgentID = nil
	}
	task, err := h.env.Service.CreateTask(ctx, owner, in, "")
	if err != nil {
		t.Fatalf("create %s task: %v", kind, err)
	}
	switch kind {
	case "waiting":
		details := "which one?"
		_, err = h.env.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusWaiting, &details)
	case "done":
		_, err = h.env.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusDone, nil)
	}
	if err != nil {
		t.Fatalf("prepare %s task: %v", kind, err)
	}
	return task.ID
}

// authenticate is the openapi3filter AuthenticationFunc: it accepts a security scheme
// only when the request carries credentials this harness knows to be good for it,
// holding the scopes the document requires. A request the document calls valid must
// therefore be one the server authorises.
func (h *oaHarness) authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	r, s := in.RequestValidationInput.Request, in.SecurityScheme
	holds := func(token string) error {
		held, known := h.scopes[token]
		if !known {
			return in.NewError(errors.New("unknown token"))
		}
		for _, scope := range in.Scopes {
			if !slices.Contains(held, scope) {
				return in.NewError(fmt.Errorf("the token lacks the %s scope", scope))
			}
		}
		return nil
	}
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return in.NewError(errors.New("no Bearer credentials"))
		}
		return holds(strings.TrimSpace(token))
	case s.Type == "apiKey" && s.In == "query":
		// ?access_token= of the event stream.
		if r.Header.Get("Authorization") != "" {
			return in.NewError(errors.New("an Authorization header wins over the query token"))
		}
		return holds(r.URL.Query().Get(s.Name))
	case s.Type == "apiKey" && s.In == "header":
		// The project is the path's {projectId}, the query's project_id (event stream),
		// or the body's project_id (agent callback).
		project := in.RequestValidationInput.PathParams["projectId"]
		if project == "" {
			project = r.URL.Query().Get("project_id")
		}
		if project == "" && r.GetBody != nil {
			if rc, err := r.GetBody(); err == nil {
				var body struct {
					ProjectID string `json:"project_id"`
				}
				_ = json.NewDecoder(rc).Decode(&body)
				rc.Close()
				project = body.ProjectID
			}
		}
		good := h.agentHeaders[project]
		if good == nil || r.Header.Get(s.Name) == "" || r.Header.Get(s.Name) != good.Get(s.Name) {
			return in.NewError(fmt.Errorf("%s is not good for project %q", s.Name, project))
		}
		return nil
	}
	return in.NewError(fmt.Errorf("security scheme %s %s is not known to the test", s.Type, s.Scheme))
}

var oaPlaceholder = regexp.MustCompile(`\{(project|otherProject|agent|otherAgent|other|origin|conv|convUUID|emptyConv|otherConv|otherConvUUID|` +
	`doc|docUnicode|otherDoc|task|waiting|done|unassigned|taskETag|waitingETag)\}`)

// call runs one case: it validates the request against the document (as the case
// says), sends it to the real server, checks status and error code, and validates
// the answer against the document, always.
func (h *oaHarness) call(t *testing.T, c oaCase, ids map[string]int64) *oaResult {
	t.Helper()
	fill := func(s string) string {
		return oaPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
			switch name := m[1 : len(m)-1]; name {
			case "project":
				return h.project
			case "otherProject":
				return h.otherProject
			case "agent":
				return strconv.FormatInt(h.agent.ID, 10)
			case "otherAgent":
				return strconv.FormatInt(h.otherAgent.ID, 10)
			case "other":
				return strconv.FormatInt(h.otherTask, 10)
			case "origin":
				return h.env.URL
			case "conv":
				return strconv.FormatInt(h.conv.ID, 10)
			case "convUUID":
				return h.conv.UUID
			case "emptyConv":
				return strconv.FormatInt(h.emptyConv.ID, 10)
			case "otherConv":
				return strconv.FormatInt(h.otherConv.ID, 10)
			case "otherConvUUID":
				return h.otherConv.UUID
			case "doc":
				return strconv.FormatInt(h.doc, 10)
			case "docUnicode":
				return strconv.FormatInt(h.docUnicode, 10)
			case "otherDoc":
				return strconv.FormatInt(h.otherDoc, 10)
			default:
				// A fresh task, or with ETag after its name, that task's current ETag.
				kind, etag := strings.CutSuffix(name, "ETag")
				if _, ok := ids[kind]; !ok {
					ids[kind] = h.freshTask(t, kind)
				}
				if etag {
					task, err := h.env.Service.GetTask(context.Background(), auth.Owner(h.project), ids[kind])
					if err != nil || task.ETag == "" {
						t.Fatalf("the ETag of the %s task: %q, %v", kind, task.ETag, err)
					}
					return task.ETag
				}
				return strconv.FormatInt(ids[kind], 10)
			}
		})
	}
	path, body := fill(c.path), []byte(fill(c.body))
	header := http.Header{}
	if len(body) > 0 {
		header.Set("Content-Type", "application/json")
	}
	switch a := c.auth; {
	case a == "none":
	case strings.HasPrefix(a, "raw:"):
		header.Set("Authorization", strings.TrimPrefix(a, "raw:"))
	case strings.HasPrefix(a, "query:"):
		token, ok := h.tokens[strings.TrimPrefix(a, "query:")]
		if !ok {
			t.Fatalf("unknown auth %q", a)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "access_token=" + url.QueryEscape(token)
	case strings.HasPrefix(a, "agent"):
		good := h.agentHeaders[h.project]
		if a == "agent-other" {
			good = h.agentHeaders[h.otherProject]
		}
		maps.Copy(header, good.Clone())
		switch a {
		case "agent", "agent-other":
		case "agent-bad-digest":
			header.Set(api.HeaderTaskAuthorization, strings.Repeat("0", 40))
		case "agent-unknown":
			header.Set(api.HeaderAgentName, "nobody")
		default:
			t.Fatalf("unknown auth %q", a)
		}
	default:
		token, ok := h.tokens[a]
		if !ok {
			t.Fatalf("unknown auth %q", a)
		}
		header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range c.header {
		header.Set(k, fill(v))
	}
	newRequest := func() *http.Request {
		var rd io.Reader
		if len(body) > 0 {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(c.method, h.env.URL+path, rd)
		if err != nil {
			t.Fatalf("new request: %v", err)
		}
		req.Header = header.Clone()
		return req
	}

	// The request, as the document sees it. HEAD is no operation of its own: it is
	// validated as the GET it mirrors, its answer without a body (TestOpenAPIHead).
	ctx := context.Background()
	vreq := newRequest()
	if c.method == http.MethodHead {
		vreq.Method = http.MethodGet
	}
	route, pathParams, err := h.router.FindRoute(vreq)
	if err != nil {
		t.Fatalf("%s %s is not an operation of openapi.json: %v", c.method, path, err)
	}
	input := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: h.authenticate, SchemaValidationOptions: oaSchemaOptions}}
	switch err := openapi3filter.ValidateRequest(ctx, input); {
	case c.req == oaValid && err != nil:
		t.Errorf("%s %s: openapi.json rejects this request, which should be valid: %v", c.method, path, err)
	case c.req == oaInvalid && err == nil:
		t.Errorf("%s %s: openapi.json accepts this request, which it should reject (the server answers %d)", c.method, path, c.status)
	}

	// The real answer.
	resp, err := h.env.Client.Do(newRequest())
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, path, err)
	}
	var raw []byte
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// On 101 net/http hands over the connection itself as the body (a WebSocket
		// here): the answer has no body, and reading would wait on the stream. Closing
		// the connection ends the stream. TestOpenAPIEventStream reads its frames.
		resp.Body.Close()
	} else {
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read answer: %v", err)
		}
	}
	res := &oaResult{status: resp.StatusCode, header: resp.Header, body: raw}
	h.covered[fmt.Sprintf("%s %s %d", vreq.Method, route.Path, res.status)] = true
	if res.status != c.status {
		t.Errorf("%s %s: status %d, want %d; body %.300s", c.method, path, res.status, c.status, raw)
	}
	var envelope struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &envelope)
	if envelope.Error.Code != c.code {
		t.Errorf("%s %s: error code %q, want %q; body %.300s", c.method, path, envelope.Error.Code, c.code, raw)
	}

	// The answer, as the document sees it: its status must be documented, its headers
	// and body must match.
	rinput := &openapi3filter.ResponseValidationInput{RequestValidationInput: input, Status: res.status, Header: res.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, SchemaValidationOptions: oaSchemaOptions, ExcludeResponseBody: c.method == http.MethodHead}}
	rinput.SetBodyBytes(raw)
	if err := openapi3filter.ValidateResponse(ctx, rinput); err != nil {
		t.Errorf("%s %s: the %d answer does not match openapi.json: %v\nbody: %.1000s", c.method, path, res.status, err, raw)
	}
	if res.status == http.StatusNoContent && len(raw) != 0 {
		t.Errorf("%s %s: 204 with a body: %.300s", c.method, path, raw)
	}
	if res.status == http.StatusUnauthorized && !strings.HasPrefix(res.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("%s %s: 401 without WWW-Authenticate: Bearer", c.method, path)
	}
	if c.check != nil && !t.Failed() {
		c.check(t, h, res, ids)
	}
	return res
}

// linkNext returns the URL of a Link: <...>; rel="next" header, or "".
func oaLinkNext(t *testing.T, r *oaResult) string {
	t.Helper()
	link := r.header.Get("Link")
	if link == "" {
		return ""
	}
	m := regexp.MustCompile(`^<([^>]+)>; rel="next"$`).FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("malformed Link header %q", link)
	}
	return m[1]
}

// oaPages checks paging: following Link from a first page of one task gives the whole
// list, oldest first, each page validated like any answer.
func oaPages(auth, fullPath string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		var got []float64
		for page := 1; ; page++ {
			items := r.list(t)
			if len(items) != 1 {
				t.Fatalf("page %d has %d tasks, want 1 (limit=1)", page, len(items))
			}
			got = append(got, items[0]["id"].(float64))
			next := oaLinkNext(t, r)
			if next == "" {
				break
			}
			if !strings.Contains(next, "limit=1") || !strings.Contains(next, "after_id=") {
				t.Fatalf("Link %q does not keep limit and set after_id", next)
			}
			if page > 100 {
				t.Fatal("more than 100 pages")
			}
			r = h.call(t, oaCase{method: "GET", path: next, auth: auth, status: 200}, ids)
		}
		full := h.call(t, oaCase{method: "GET", path: fullPath, auth: auth, status: 200}, ids)
		if full.header.Get("Link") != "" {
			t.Errorf("a list without limit has a Link header")
		}
		var want []float64
		for _, item := range full.list(t) {
			want = append(want, item["id"].(float64))
		}
		if len(want) < 3 || !slices.Equal(got, want) || !slices.IsSorted(got) {
			t.Errorf("pages give ids %v, the whole list %v (want equal, ascending, at least 3)", got, want)
		}
	}
}

// oaNoConversationInLists checks that list items leave out conversation.
func oaNoConversationInLists(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	items := r.list(t)
	if len(items) == 0 {
		t.Fatal("empty list")
	}
	for _, item := range items {
		if _, ok := item["conversation"]; ok {
			t.Errorf("list item %v carries conversation", item["id"])
		}
	}
}

// oaHasConversation checks that a single task carries its conversation.
func oaHasConversation(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	if _, ok := r.object(t)["conversation"]; !ok {
		t.Errorf("single task without conversation: %s", r.body)
	}
}

// oaETagIs checks that the answer carries the current ETag of the case's fresh task of
// that kind (as it is after the answer: an update's answer carries the new one).
func oaETagIs(kind string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		t.Helper()
		task, err := h.env.Service.GetTask(context.Background(), auth.Owner(h.project), ids[kind])
		if err != nil || task.ETag == "" || r.header.Get("ETag") != task.ETag {
			t.Errorf("the answer's ETag %q, the %s task's %q (%v)", r.header.Get("ETag"), kind, task.ETag, err)
		}
	}
}

// oaIs decodes the answer as a T and checks it.
func oaIs[T any](want func(h *oaHarness, v T) error) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
		t.Helper()
		var v T
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatalf("answer is not a %T: %v: %s", v, err, r.body)
		}
		if err := want(h, v); err != nil {
			t.Errorf("%v: %s", err, r.body)
		}
	}
}

// oaLen checks the length of a list answer.
func oaLen(atLeast, atMost int) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
		if n := len(r.list(t)); n < atLeast || n > atMost {
			t.Errorf("%d items, want %d to %d: %.300s", n, atLeast, atMost, r.body)
		}
	}
}

// oaWSKey is the Sec-WebSocket-Key of the scenarios' handshakes (the example of RFC 6455).
const oaWSKey = "dGhlIHNhbXBsZSBub25jZQ=="

// oaHandshake is the headers of a WebSocket opening handshake, changed by extra name,
// value pairs (an empty value leaves the header out).
func oaHandshake(extra ...string) map[string]string {
	h := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": oaWSKey}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(h, extra[i])
		} else {
			h[extra[i]] = extra[i+1]
		}
	}
	return h
}

// oaUpgraded checks a 101 answer: Sec-WebSocket-Accept is the one RFC 6455 (4.2.2)
// derives from oaWSKey.
func oaUpgraded(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	sum := sha1.Sum([]byte(oaWSKey + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if got, want := r.header.Get("Sec-WebSocket-Accept"), base64.StdEncoding.EncodeToString(sum[:]); got != want {
		t.Errorf("Sec-WebSocket-Accept %q, want %q", got, want)
	}
}

// oaRefusedHandshake checks a refusal of the WebSocket library: in the envelope (the
// code is checked by call), naming the protocol version it speaks.
func oaRefusedHandshake(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	if v := r.header.Get("Sec-WebSocket-Version"); v != "13" {
		t.Errorf("Sec-WebSocket-Version %q, want 13", v)
	}
}

// oaMultipart builds a multipart/form-data body and its Content-Type header; each part
// is {name, filename, Content-Type, content}, empty strings leaving a header out.
func oaMultipart(parts ...[4]string) (body string, header map[string]string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary("oa-boundary-5d1b3f"); err != nil {
		panic(err)
	}
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		params := map[string]string{"name": p[0]}
		if p[1] != "" {
			params["filename"] = p[1]
		}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", params))
		if p[2] != "" {
			h.Set("Content-Type", p[2])
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			panic(err)
		}
		_, _ = io.WriteString(pw, p[3])
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.String(), map[string]string{"Content-Type": w.FormDataContentType()}
}

func oaScenarios() []oaCase {
	huge := strings.Repeat("x", api.MaxJSONBody+1)
	createKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		first := r.task(t)
		again := h.call(t, oaCase{method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"once", "details":"d"}`,
			header: map[string]string{"Idempotency-Key": "oa-create-1"}, status: 201}, ids)
		if again.task(t).ID != first.ID {
			t.Errorf("replay with the same Idempotency-Key made task %d, the first was %d", again.task(t).ID, first.ID)
		}
		h.call(t, oaCase{method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"another"}`,
			header: map[string]string{"Idempotency-Key": "oa-create-1"}, status: 409, code: "conflict"}, ids)
	}
	respondKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		path := fmt.Sprintf("/api/tasks/%d/respond", ids["waiting"])
		again := h.call(t, oaCase{method: "POST", path: path, auth: "wo", body: `{"response":"blue"}`,
			header: map[string]string{"Idempotency-Key": "oa-respond-1"}, status: 200}, ids)
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("replay answered %s, the first answer was %s", again.body, r.body)
		}
		h.call(t, oaCase{method: "POST", path: path, auth: "wo", body: `{"response":"red"}`,
			header: map[string]string{"Idempotency-Key": "oa-respond-1"}, status: 409, code: "conflict"}, ids)
	}
	taskIs := func(want func(model.Task) error) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
			if err := want(r.task(t)); err != nil {
				t.Errorf("%v: %s", err, r.body)
			}
		}
	}
	return []oaCase{
		// Service.
		{name: "health", method: "GET", path: "/healthz", auth: "none", status: 200},
		{name: "openapi document", method: "GET", path: "/api/openapi.json", auth: "none", status: 200},

		// GET /api/tasks
		{name: "list", method: "GET", path: "/api/tasks", auth: "ro", status: 200, check: oaNoConversationInLists},
		{name: "list by status", method: "GET", path: "/api/tasks?status=Waiting", auth: "rw", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				for _, item := range r.list(t) {
					if item["status"] != "Waiting" {
						t.Errorf("status filter let %v through", item["status"])
					}
				}
			}},
		{name: "list by agent", method: "GET", path: "/api/tasks?agent_id={agent}", auth: "ro", status: 200},
		{name: "list pages with Link", method: "GET", path: "/api/tasks?limit=1", auth: "ro", status: 200, check: oaPages("ro", "/api/tasks")},
		{name: "list after_id", method: "GET", path: "/api/tasks?after_id=0&limit=1000", auth: "ro", status: 200},
		{name: "list bad status", method: "GET", path: "/api/tasks?status=doing", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list empty status", method: "GET", path: "/api/tasks?status=", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list limit 0", method: "GET", path: "/api/tasks?limit=0", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list limit 1001", method: "GET", path: "/api/tasks?limit=1001", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list limit not a number", method: "GET", path: "/api/tasks?limit=ten", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list negative after_id", method: "GET", path: "/api/tasks?after_id=-1", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list fractional agent_id", method: "GET", path: "/api/tasks?agent_id=1.5", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list no credentials", method: "GET", path: "/api/tasks", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "list unknown token", method: "GET", path: "/api/tasks", auth: "raw:Bearer adk_0000000000000000000000000000000000000000", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "list Bearer omitted", method: "GET", path: "/api/tasks", auth: "raw:" + "adk_0000000000000000000000000000000000000000", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "list without task:read", method: "GET", path: "/api/tasks", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "list messaging token", method: "GET", path: "/api/tasks", auth: "msg", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "list data token", method: "GET", path: "/api/tasks", auth: "data", req: oaInvalid, status: 403, code: "forbidden"},

		// POST /api/tasks
		{name: "create is Backlog without agent", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","details":"d","steps":[{"title":"one"}]}`, status: 201,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Backlog" || v.AgentID != nil || v.AgentName != "" || v.Conversation == nil || len(v.Steps) != 1 ||
					v.Steps[0].Status != "pending" || v.Source != "user" || v.TaskType != "standard" || v.CurrentStepNum != 0 {
					return errors.New("not a new Backlog task")
				}
				return nil
			})},
		{name: "create is Todo with agent", method: "POST", path: "/api/tasks", auth: "rw", body: `{"summary":"s","agent_id":{agent},"taskType":"review"}`, status: 201,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Todo" || v.AgentID == nil || v.AgentName != oaAgentName || v.TaskType != "review" {
					return errors.New("not a new Todo task of the agent")
				}
				return nil
			})},
		{name: "create ignores unknown fields", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","colour":"blue","steps":[{"title":"x","extra":1}]}`, status: 201},
		{name: "create idempotent", method: "POST", path: "/api/tasks", auth: "wo", body: `{"details":"d","summary":"once"}`,
			header: map[string]string{"Idempotency-Key": "oa-create-1"}, status: 201, check: createKey},
		{name: "create malformed JSON", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create not an object", method: "POST", path: "/api/tasks", auth: "wo", body: `[1,2]`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create without body", method: "POST", path: "/api/tasks", auth: "wo", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create missing summary", method: "POST", path: "/api/tasks", auth: "wo", body: `{"details":"d"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create blank summary", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"   "}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create summary too long", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"` + strings.Repeat("s", service.MaxSummaryLen+1) + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create summary wrong type", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":5}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create step without title", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","steps":[{}]}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create agent of another project", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","agent_id":{otherAgent}}`, status: 400, code: "invalid_argument"},
		{name: "create unknown conversation", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","conversation_id":999999}`, status: 400, code: "invalid_argument"},
		{name: "create bad Idempotency-Key", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s"}`, header: map[string]string{"Idempotency-Key": "has space"}, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create no credentials", method: "POST", path: "/api/tasks", auth: "none", body: `{"summary":"s"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "create read-only token", method: "POST", path: "/api/tasks", auth: "ro", body: `{"summary":"s"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "create body over 1 MiB", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// DELETE /api/tasks/done
		{name: "delete done", method: "DELETE", path: "/api/tasks/done", auth: "wo", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				if n, _ := r.object(t)["deleted"].(float64); n < 1 {
					t.Errorf("deleted %v, want at least 1", r.object(t)["deleted"])
				}
				h.call(t, oaCase{method: "GET", path: "/api/tasks?status=Done", auth: "ro", status: 200,
					check: func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
						if len(r.list(t)) != 0 {
							t.Errorf("Done tasks remain: %s", r.body)
						}
					}}, ids)
				h.call(t, oaCase{method: "GET", path: "/api/tasks/{other}", auth: "other", status: 200}, ids)
			}},
		{name: "delete done no credentials", method: "DELETE", path: "/api/tasks/done", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "delete done read-only", method: "DELETE", path: "/api/tasks/done", auth: "ro", req: oaInvalid, status: 403, code: "forbidden"},

		// GET /api/tasks/{id}
		{name: "get", method: "GET", path: "/api/tasks/{task}", auth: "ro", status: 200, check: oaHasConversation},
		{name: "get waiting", method: "GET", path: "/api/tasks/{waiting}", auth: "rw", status: 200,
			check: taskIs(func(v model.Task) error {
				if !v.IsWaiting || v.WaitingDetails == nil || *v.WaitingDetails != "which one?" || v.WaitingVersion != 1 {
					return errors.New("not the waiting task")
				}
				return nil
			})},
		{name: "get id not an integer", method: "GET", path: "/api/tasks/abc", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "get id 0", method: "GET", path: "/api/tasks/0", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "get no credentials", method: "GET", path: "/api/tasks/{task}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "get without task:read", method: "GET", path: "/api/tasks/{task}", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "get unknown task", method: "GET", path: "/api/tasks/999999", auth: "ro", status: 404, code: "not_found"},
		{name: "get task of another project", method: "GET", path: "/api/tasks/{other}", auth: "ro", status: 404, code: "not_found"},
		{name: "get not modified", method: "GET", path: "/api/tasks/{task}", auth: "ro", header: map[string]string{"If-None-Match": "{taskETag}"}, status: 304,
			check: oaETagIs("task")},
		{name: "get changed since", method: "GET", path: "/api/tasks/{task}", auth: "ro", header: map[string]string{"If-None-Match": `"stale"`}, status: 200,
			check: oaETagIs("task")},

		// DELETE /api/tasks/{id}
		{name: "delete", method: "DELETE", path: "/api/tasks/{task}", auth: "wo", status: 204,
			check: func(t *testing.T, h *oaHarness, _ *oaResult, ids map[string]int64) {
				h.call(t, oaCase{method: "GET", path: "/api/tasks/{task}", auth: "ro", status: 404, code: "not_found"}, ids)
			}},
		{name: "delete If-Match stale", method: "DELETE", path: "/api/tasks/{task}", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, status: 412, code: "precondition_failed"},
		{name: "delete If-Match current", method: "DELETE", path: "/api/tasks/{task}", auth: "wo", header: map[string]string{"If-Match": "{taskETag}"}, status: 204},
		{name: "delete id not an integer", method: "DELETE", path: "/api/tasks/abc", auth: "wo", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "delete no credentials", method: "DELETE", path: "/api/tasks/{task}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "delete read-only", method: "DELETE", path: "/api/tasks/{task}", auth: "ro", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "delete unknown task", method: "DELETE", path: "/api/tasks/999999", auth: "wo", status: 404, code: "not_found"},
		{name: "delete task of another project", method: "DELETE", path: "/api/tasks/{other}", auth: "wo", status: 404, code: "not_found"},

		// PUT /api/tasks/{id}/status
		{name: "status Doing", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"Doing"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Doing" || !v.IsActive || v.IsWaiting {
					return errors.New("not Doing")
				}
				return nil
			})},
		{name: "status Waiting", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"Waiting","waitingDetails":"ok?"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if !v.IsWaiting || v.WaitingDetails == nil || *v.WaitingDetails != "ok?" || v.WaitingVersion != 1 {
					return errors.New("not Waiting with details and version 1")
				}
				return nil
			})},
		{name: "status leaving Waiting", method: "PUT", path: "/api/tasks/{waiting}/status", auth: "wo", body: `{"status":"Backlog"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Backlog" || v.WaitingDetails != nil || v.IsWaiting {
					return errors.New("waiting details not cleared")
				}
				return nil
			})},
		{name: "status If-Match stale", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"status":"Done"}`, status: 412, code: "precondition_failed"},
		{name: "status If-Match current", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", header: map[string]string{"If-Match": "{taskETag}"}, body: `{"status":"Done"}`, status: 200,
			check: oaETagIs("task")},
		{name: "status bad enum", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"done"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "status missing", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "status malformed JSON", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `status=Done`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "status no credentials", method: "PUT", path: "/api/tasks/{task}/status", auth: "none", body: `{"status":"Done"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "status read-only", method: "PUT", path: "/api/tasks/{task}/status", auth: "ro", body: `{"status":"Done"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "status unknown task", method: "PUT", path: "/api/tasks/999999/status", auth: "wo", body: `{"status":"Done"}`, status: 404, code: "not_found"},
		{name: "status task of another project", method: "PUT", path: "/api/tasks/{other}/status", auth: "wo", body: `{"status":"Done"}`, status: 404, code: "not_found"},
		{name: "status body over 1 MiB", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"Done","x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// PUT /api/tasks/{id}/agent
		{name: "assign", method: "PUT", path: "/api/tasks/{waiting}/agent", auth: "wo", body: `{"agent_id":{agent}}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.AgentName != oaAgentName || v.Status != "Waiting" {
					return errors.New("not assigned, or the status changed")
				}
				return nil
			})},
		{name: "unassign with null", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":null}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.AgentID != nil || v.AgentName != "" || v.Status != "Todo" {
					return errors.New("not unassigned, or the status changed")
				}
				return nil
			})},
		{name: "unassign with empty body", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", status: 200},
		{name: "assign agent of another project", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":{otherAgent}}`, status: 400, code: "invalid_argument"},
		{name: "assign If-Match stale", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"agent_id":null}`, status: 412, code: "precondition_failed"},
		{name: "assign wrong type", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":"worker"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "assign no credentials", method: "PUT", path: "/api/tasks/{task}/agent", auth: "none", body: `{"agent_id":null}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "assign read-only", method: "PUT", path: "/api/tasks/{task}/agent", auth: "ro", body: `{"agent_id":null}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "assign task of another project", method: "PUT", path: "/api/tasks/{other}/agent", auth: "wo", body: `{"agent_id":null}`, status: 404, code: "not_found"},
		{name: "assign body over 1 MiB", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":null,"x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// PUT /api/tasks/{id}/steps/{stepNum}/status
		{name: "step completed", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"completed"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Steps[0].Status != "completed" || v.CurrentStepNum != 1 {
					return errors.New("step 0 not completed, or current_step_num not 1")
				}
				return nil
			})},
		{name: "step synonym Doing", method: "PUT", path: "/api/tasks/{task}/steps/1/status", auth: "wo", body: `{"status":"Doing"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Steps[1].Status != "in_progress" {
					return errors.New("Doing is not stored as in_progress")
				}
				return nil
			})},
		{name: "step synonym Done", method: "PUT", path: "/api/tasks/{task}/steps/2/status", auth: "wo", body: `{"status":"Done"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Steps[2].Status != "completed" {
					return errors.New("Done is not stored as completed")
				}
				return nil
			})},
		{name: "step synonym Todo", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"Todo"}`, status: 200},
		{name: "step skipped", method: "PUT", path: "/api/tasks/{task}/steps/2/status", auth: "wo", body: `{"status":"skipped"}`, status: 200},
		{name: "step If-Match stale", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"status":"completed"}`, status: 412, code: "precondition_failed"},
		{name: "step bad enum", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"finished"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step missing status", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step negative", method: "PUT", path: "/api/tasks/{task}/steps/-1/status", auth: "wo", body: `{"status":"completed"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step not a number", method: "PUT", path: "/api/tasks/{task}/steps/first/status", auth: "wo", body: `{"status":"completed"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step no credentials", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "none", body: `{"status":"completed"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "step read-only", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "ro", body: `{"status":"completed"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "step out of range", method: "PUT", path: "/api/tasks/{task}/steps/3/status", auth: "wo", body: `{"status":"completed"}`, status: 404, code: "not_found"},
		{name: "step unknown task", method: "PUT", path: "/api/tasks/999999/steps/0/status", auth: "wo", body: `{"status":"completed"}`, status: 404, code: "not_found"},
		{name: "step body over 1 MiB", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"completed","x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// POST /api/tasks/{id}/respond
		{name: "respond", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"the blue one"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				n := len(v.Conversation)
				if v.Status != "Doing" || v.WaitingDetails != nil || n == 0 || v.Conversation[n-1].Role != "user" || v.Conversation[n-1].Content != "the blue one" {
					return errors.New("the response did not join the conversation, or the task is not Doing")
				}
				return nil
			})},
		{name: "respond current waiting_version", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"x","waiting_version":1}`, status: 200},
		{name: "respond idempotent", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"blue"}`,
			header: map[string]string{"Idempotency-Key": "oa-respond-1"}, status: 200, check: respondKey},
		{name: "respond stale waiting_version", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"x","waiting_version":0}`, status: 409, code: "conflict"},
		{name: "respond If-Match stale", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"response":"x"}`, status: 412, code: "precondition_failed"},
		{name: "respond If-Match current", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", header: map[string]string{"If-Match": "{waitingETag}"}, body: `{"response":"x"}`, status: 200},
		{name: "respond not Waiting", method: "POST", path: "/api/tasks/{task}/respond", auth: "wo", body: `{"response":"x"}`, status: 409, code: "conflict"},
		{name: "respond empty", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":""}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "respond missing", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "respond version wrong type", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"x","waiting_version":"1"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "respond no credentials", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "none", body: `{"response":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "respond read-only", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "ro", body: `{"response":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "respond unknown task", method: "POST", path: "/api/tasks/999999/respond", auth: "wo", body: `{"response":"x"}`, status: 404, code: "not_found"},
		{name: "respond task of another project", method: "POST", path: "/api/tasks/{other}/respond", auth: "wo", body: `{"response":"x"}`, status: 404, code: "not_found"},
		{name: "respond body over 1 MiB", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// POST /api/agent_callback/{id}
		{name: "callback report", method: "POST", path: "/api/agent_callback/{task}", auth: "agent",
			body: `{"project_id":"{project}","steps":[{"index":0,"status":"completed"},{"index":1,"status":"Doing"}],"status":"Doing","message":"working on it"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				n := len(v.Conversation)
				if v.Status != "Doing" || v.Steps[0].Status != "completed" || v.Steps[1].Status != "in_progress" || v.CurrentStepNum != 1 ||
					n == 0 || v.Conversation[n-1].Role != "assistant" || v.Conversation[n-1].Content != "working on it" {
					return errors.New("the report was not applied")
				}
				return nil
			})},
		{name: "callback waiting_details alone", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","waitingDetails":"need input"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Waiting" || v.WaitingDetails == nil || *v.WaitingDetails != "need input" || v.WaitingVersion != 1 {
					return errors.New("waiting_details without status did not make the task Waiting")
				}
				return nil
			})},
		{name: "callback idempotent", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"once"}`,
			header: map[string]string{"Idempotency-Key": "oa-callback-1"}, status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				again := h.call(t, oaCase{method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"once"}`,
					header: map[string]string{"Idempotency-Key": "oa-callback-1"}, status: 200}, ids)
				if n := len(again.task(t).Conversation); n != 1 || !bytes.Equal(again.body, r.body) {
					t.Errorf("the replay answered %s (%d messages), the first answer was %s", again.body, n, r.body)
				}
				h.call(t, oaCase{method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"twice"}`,
					header: map[string]string{"Idempotency-Key": "oa-callback-1"}, status: 409, code: "conflict"}, ids)
			}},
		{name: "callback If-Match stale", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", header: map[string]string{"If-Match": `"stale"`}, body: `{"project_id":"{project}","status":"Doing"}`, status: 412, code: "precondition_failed"},
		{name: "callback malformed JSON", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback bad status", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","status":"Finished"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback bad step status", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","steps":[{"index":0,"status":"finished"}]}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback step past the last", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","steps":[{"index":3,"status":"completed"}]}`, status: 400, code: "invalid_argument"},
		{name: "callback without project_id", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"status":"Done"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback no credentials", method: "POST", path: "/api/agent_callback/{task}", auth: "none", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "callback wrong digest", method: "POST", path: "/api/agent_callback/{task}", auth: "agent-bad-digest", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "callback unknown agent", method: "POST", path: "/api/agent_callback/{task}", auth: "agent-unknown", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "callback with a Bearer token", method: "POST", path: "/api/agent_callback/{task}", auth: "rw", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "callback on a task not assigned to the agent", method: "POST", path: "/api/agent_callback/{unassigned}", auth: "agent", body: `{"project_id":"{project}","status":"Done"}`, status: 403, code: "forbidden"},
		{name: "callback unknown task", method: "POST", path: "/api/agent_callback/999999", auth: "agent", body: `{"project_id":"{project}"}`, status: 404, code: "not_found"},
		{name: "callback task of another project", method: "POST", path: "/api/agent_callback/{other}", auth: "agent", body: `{"project_id":"{project}"}`, status: 404, code: "not_found"},
		{name: "callback body over 1 MiB", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// GET /api/projects/{projectId}/tasks
		{name: "project list", method: "GET", path: "/api/projects/{project}/tasks", auth: "ro", status: 200, check: oaNoConversationInLists},
		{name: "project list as agent", method: "GET", path: "/api/projects/{project}/tasks?status=Todo", auth: "agent", status: 200},
		{name: "project list assigned=me", method: "GET", path: "/api/projects/{project}/tasks?assigned=me", auth: "agent", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) == 0 {
					t.Fatal("the agent has no tasks")
				}
				for _, item := range items {
					if item["agent_id"] != float64(h.agent.ID) {
						t.Errorf("assigned=me let a task of agent %v through", item["agent_id"])
					}
				}
			}},
		{name: "project list pages with Link", method: "GET", path: "/api/projects/{project}/tasks?limit=1", auth: "agent", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				oaPages("agent", "/api/projects/"+h.project+"/tasks")(t, h, r, ids)
			}},
		{name: "project list assigned=me for a user", method: "GET", path: "/api/projects/{project}/tasks?assigned=me", auth: "ro", status: 400, code: "invalid_argument"},
		{name: "project list bad assigned", method: "GET", path: "/api/projects/{project}/tasks?assigned=you", auth: "agent", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "project list bad limit", method: "GET", path: "/api/projects/{project}/tasks?limit=0", auth: "agent", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "project list no credentials", method: "GET", path: "/api/projects/{project}/tasks", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list wrong digest", method: "GET", path: "/api/projects/{project}/tasks", auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list unknown agent", method: "GET", path: "/api/projects/{project}/tasks", auth: "agent-unknown", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list agent of another project", method: "GET", path: "/api/projects/{project}/tasks", auth: "agent-other", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list without task:read", method: "GET", path: "/api/projects/{project}/tasks", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "project list another project", method: "GET", path: "/api/projects/{otherProject}/tasks", auth: "ro", status: 404, code: "not_found"},

		// GET /api/projects/{projectId}/tasks/{id}
		{name: "project get", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "ro", status: 200, check: oaHasConversation},
		{name: "project get as agent", method: "GET", path: "/api/projects/{project}/tasks/{waiting}", auth: "agent", status: 200, check: oaHasConversation},
		{name: "project get not modified", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "agent", header: map[string]string{"If-None-Match": "{taskETag}"}, status: 304},
		{name: "project get id not an integer", method: "GET", path: "/api/projects/{project}/tasks/abc", auth: "agent", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "project get no credentials", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project get wrong digest", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project get without task:read", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "project get another project", method: "GET", path: "/api/projects/{otherProject}/tasks/{other}", auth: "ro", status: 404, code: "not_found"},
		{name: "project get task of another project", method: "GET", path: "/api/projects/{project}/tasks/{other}", auth: "agent", status: 404, code: "not_found"},
	}
}

// oaConversationScenarios cover the Conversations REST routes.
func oaConversationScenarios() []oaCase {
	const convs = "/api/projects/{project}/conversations"
	huge := strings.Repeat("x", api.MaxJSONBody+1)
	longMessage := strings.Repeat("m", service.MaxMessageLen+1)
	file := func(name, ctype, content string) [4]string { return [4]string{"file", name, ctype, content} }
	notes, notesHeader := oaMultipart(file("more-notes.txt", "text/plain", "more notes"))
	convIs := func(want func(h *oaHarness, v model.Conversation) error) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return oaIs(func(h *oaHarness, v model.Conversation) error {
			if v.ID < 1 || v.UUID == "" || v.ProjectID != h.project || v.CreatedAt.IsZero() {
				return errors.New("not a conversation of the project")
			}
			return want(h, v)
		})
	}
	named := func(name string, participants ...string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return convIs(func(_ *oaHarness, v model.Conversation) error {
			if (name == "") != (v.Name == nil) || (v.Name != nil && *v.Name != name) || !slices.Equal(v.Participants, participants) {
				return fmt.Errorf("want name %q and participants %v", name, participants)
			}
			return nil
		})
	}
	msgIs := func(author, authorType, content string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return oaIs(func(h *oaHarness, v model.Message) error {
			agent := authorType == model.ActorAgent
			if v.ConversationID != h.conv.ID || v.Author != author || v.AuthorType != authorType || v.Content != content ||
				v.Reactions == nil || len(v.Reactions) != 0 || (v.AgentID != nil) != agent || (agent && *v.AgentID != h.agent.ID) {
				return fmt.Errorf("not a new message %q of %s %s in the conversation", content, authorType, author)
			}
			return nil
		})
	}
	docIs := func(name, mimeType, uploadedBy string, size int64) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return oaIs(func(h *oaHarness, v model.Document) error {
			url := fmt.Sprintf("/api/projects/%s/conversations/%d/documents/%d", h.project, h.conv.ID, v.ID)
			if v.Name != name || (mimeType != "" && v.MimeType != mimeType) || v.UploadedBy != uploadedBy || v.Size != size ||
				v.ConversationID != h.conv.ID || v.URL != url || v.CreatedAt.IsZero() {
				return fmt.Errorf("not the document %s (%s, %d bytes, by %s) at %s", name, mimeType, size, uploadedBy, url)
			}
			return nil
		})
	}
	createKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		key := map[string]string{"Idempotency-Key": "oa-conv-1"}
		again := h.call(t, oaCase{method: "POST", path: convs, auth: "mw", body: `{"name":"idem", "content":"once"}`, header: key, status: 201}, ids)
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("the replay answered %s, the first answer was %s", again.body, r.body)
		}
		h.call(t, oaCase{method: "POST", path: convs, auth: "mw", body: `{"message":"other"}`, header: key, status: 409, code: "conflict"}, ids)
	}
	postKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		key := map[string]string{"Idempotency-Key": "oa-message-1"}
		again := h.call(t, oaCase{method: "POST", path: convs + "/{convUUID}/messages", auth: "mw", body: `{"content":"only once"}`, header: key, status: 201}, ids)
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("the replay by uuid answered %s, the first answer was %s", again.body, r.body)
		}
		h.call(t, oaCase{method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"another text"}`, header: key, status: 409, code: "conflict"}, ids)
		h.call(t, oaCase{method: "POST", path: convs + "/{emptyConv}/messages", auth: "mw", body: `{"message":"only once"}`, header: key, status: 409, code: "conflict"}, ids)
	}
	download := func(body, filename string, extended bool) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
			disp := r.header.Get("Content-Disposition")
			kind, params, err := mime.ParseMediaType(disp)
			if string(r.body) != body || r.header.Get("Content-Type") != "text/plain" || err != nil || kind != "attachment" ||
				params["filename"] != filename || strings.Contains(disp, "filename*=") != extended {
				t.Errorf("download %q (%s), Content-Disposition %q (%v): want %q as attachment %q", r.body, r.header.Get("Content-Type"), disp, err, body, filename)
			}
		}
	}
	linked := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		oaNoConversationInLists(t, h, r, ids)
		items := r.list(t)
		for _, item := range items {
			if item["conversation_id"] != float64(h.conv.ID) {
				t.Errorf("task %v is linked to %v, not to the conversation", item["id"], item["conversation_id"])
			}
		}
		if len(items) < 3 {
			t.Errorf("%d linked tasks, want at least 3", len(items))
		}
	}
	upload := func(c oaCase, body string, header map[string]string) oaCase {
		c.method, c.body, c.header = "POST", body, header
		return c
	}
	noFile, noFileHeader := oaMultipart([4]string{"attachment", "a.txt", "text/plain", "x"})
	withComment, withCommentHeader := oaMultipart([4]string{"comment", "", "", "see attached"}, file("plan-2.md", "text/markdown", "# plan"))
	byExtension, byExtensionHeader := oaMultipart(file("data.json", "", `{"a":1}`))
	disguised, disguisedHeader := oaMultipart(file("..\\evil/\u202etxt.exe", "application/octet-stream", "MZ"))
	overLimit, overLimitHeader := oaMultipart(file("big.bin", "application/octet-stream", strings.Repeat("\x00", service.MaxDocumentSize+1)))
	farOver, farOverHeader := oaMultipart(file("bigger.bin", "application/octet-stream", strings.Repeat("\x00", service.MaxDocumentSize+2<<20)))
	malformedHeader := map[string]string{"Content-Type": "multipart/form-data; boundary=nope"}

	return []oaCase{
		// POST /api/projects/{projectId}/conversations
		{name: "conversation create", method: "POST", path: convs, auth: "mw", body: `{"message":"hi"}`, status: 201, check: named("", "test")},
		{name: "conversation create named", method: "POST", path: convs, auth: "msg", body: `{"message":"hi","name":"plans"}`, status: 201, check: named("plans", "test")},
		{name: "conversation create with content", method: "POST", path: convs, auth: "mw", body: `{"content":"hi"}`, status: 201},
		{name: "conversation create with message and content alike", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","content":"hi"}`, status: 201},
		{name: "conversation create blank name", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","name":"  "}`, status: 201, check: named("", "test")},
		{name: "conversation create null name", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","name":null}`, status: 201, check: named("", "test")},
		{name: "conversation create longest message", method: "POST", path: convs, auth: "mw", body: `{"message":"` + longMessage[1:] + `"}`, status: 201},
		{name: "conversation create by agent", method: "POST", path: convs, auth: "agent", body: `{"message":"hi"}`, status: 201, check: named("", oaAgentName)},
		{name: "conversation create ignores unknown fields", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","colour":1}`, status: 201},
		{name: "conversation create idempotent", method: "POST", path: convs, auth: "mw", body: `{"message":"once","name":"idem"}`,
			header: map[string]string{"Idempotency-Key": "oa-conv-1"}, status: 201, check: createKey},
		{name: "conversation create message and content differ", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","content":"ho"}`, status: 400, code: "invalid_argument"},
		{name: "conversation create missing message", method: "POST", path: convs, auth: "mw", body: `{"name":"x"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create null message", method: "POST", path: convs, auth: "mw", body: `{"message":null}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create blank message", method: "POST", path: convs, auth: "mw", body: `{"message":"  "}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create message wrong type", method: "POST", path: convs, auth: "mw", body: `{"message":5}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create message too long", method: "POST", path: convs, auth: "mw", body: `{"message":"` + longMessage + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create name too long", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","name":"` + strings.Repeat("n", service.MaxConversationNameLen+1) + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create malformed JSON", method: "POST", path: convs, auth: "mw", body: `{"message":`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create not an object", method: "POST", path: convs, auth: "mw", body: `["hi"]`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create without body", method: "POST", path: convs, auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create bad Idempotency-Key", method: "POST", path: convs, auth: "mw", body: `{"message":"hi"}`, header: map[string]string{"Idempotency-Key": "a b"}, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create no credentials", method: "POST", path: convs, auth: "none", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create wrong token", method: "POST", path: convs, auth: "raw:Bearer adk_0000000000000000000000000000000000000000", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create wrong digest", method: "POST", path: convs, auth: "agent-bad-digest", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create agent of another project", method: "POST", path: convs, auth: "agent-other", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create without messaging:write", method: "POST", path: convs, auth: "mr", body: `{"message":"hi"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation create task token", method: "POST", path: convs, auth: "rw", body: `{"message":"hi"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation create data token", method: "POST", path: convs, auth: "data", body: `{"message":"hi"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation create in another project", method: "POST", path: "/api/projects/{otherProject}/conversations", auth: "mw", body: `{"message":"hi"}`, status: 404, code: "not_found"},
		{name: "conversation create body over 1 MiB", method: "POST", path: convs, auth: "mw", body: `{"message":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// GET /api/projects/{projectId}/conversations
		{name: "conversations list", method: "GET", path: convs, auth: "mr", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) < 3 || items[0]["id"] != float64(h.conv.ID) || items[0]["name"] != "general" || items[1]["name"] != nil {
					t.Errorf("the list does not start with the fixtures, oldest first: %.500s", r.body)
				}
			}},
		{name: "conversations list as agent", method: "GET", path: convs, auth: "agent", status: 200},
		{name: "conversations list pages with Link", method: "GET", path: convs + "?limit=1", auth: "mr", status: 200, check: oaPages("mr", convs)},
		{name: "conversations list after_id", method: "GET", path: convs + "?after_id={conv}&limit=1000", auth: "mr", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				if items := r.list(t); len(items) == 0 || items[0]["id"] != float64(h.emptyConv.ID) {
					t.Errorf("after_id did not start after the conversation: %.300s", r.body)
				}
			}},
		{name: "conversations list limit 0", method: "GET", path: convs + "?limit=0", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list limit 1001", method: "GET", path: convs + "?limit=1001", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list after_id not a number", method: "GET", path: convs + "?after_id=x", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list negative after_id", method: "GET", path: convs + "?after_id=-1", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list no credentials", method: "GET", path: convs, auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversations list wrong digest", method: "GET", path: convs, auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversations list without messaging:read", method: "GET", path: convs, auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversations list task token", method: "GET", path: convs, auth: "ro", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversations list another project", method: "GET", path: "/api/projects/{otherProject}/conversations", auth: "mr", status: 404, code: "not_found"},

		// GET /api/projects/{projectId}/conversations/{conversationId}
		{name: "conversation get by id", method: "GET", path: convs + "/{conv}", auth: "mr", status: 200, check: named("general", "owner")},
		{name: "conversation get by uuid as agent", method: "GET", path: convs + "/{convUUID}", auth: "agent", status: 200,
			check: convIs(func(h *oaHarness, v model.Conversation) error {
				if v.ID != h.conv.ID || v.UUID != h.conv.UUID {
					return errors.New("not the conversation of the uuid")
				}
				return nil
			})},
		{name: "conversation get no credentials", method: "GET", path: convs + "/{conv}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation get unknown agent", method: "GET", path: convs + "/{conv}", auth: "agent-unknown", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation get without messaging:read", method: "GET", path: convs + "/{conv}", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation get data token", method: "GET", path: convs + "/{conv}", auth: "data", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation get unknown", method: "GET", path: convs + "/999999", auth: "mr", status: 404, code: "not_found"},
		{name: "conversation get unknown uuid", method: "GET", path: convs + "/00000000-0000-4000-8000-000000000000", auth: "mr", status: 404, code: "not_found"},
		{name: "conversation get neither id nor uuid", method: "GET", path: convs + "/abc", auth: "mr", req: oaInvalid, status: 404, code: "not_found"},
		{name: "conversation get of another project", method: "GET", path: convs + "/{otherConv}", auth: "mr", status: 404, code: "not_found"},
		{name: "conversation get uuid of another project", method: "GET", path: convs + "/{otherConvUUID}", auth: "agent", status: 404, code: "not_found"},
		{name: "conversation get via another project", method: "GET", path: "/api/projects/{otherProject}/conversations/{otherConv}", auth: "mr", status: 404, code: "not_found"},

		// POST .../conversations/{conversationId}/messages
		{name: "message post", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"more"}`, status: 201, check: msgIs("test", "user", "more")},
		{name: "message post by uuid", method: "POST", path: convs + "/{convUUID}/messages", auth: "msg", body: `{"message":"by uuid"}`, status: 201, check: msgIs("test", "user", "by uuid")},
		{name: "message post as content", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"content":"via content"}`, status: 201, check: msgIs("test", "user", "via content")},
		{name: "message post by agent", method: "POST", path: convs + "/{conv}/messages", auth: "agent", body: `{"message":"done"}`, status: 201,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				msgIs(oaAgentName, "agent", "done")(t, h, r, ids)
				h.call(t, oaCase{method: "GET", path: convs + "/{conv}", auth: "mr", status: 200,
					check: convIs(func(_ *oaHarness, v model.Conversation) error {
						if !slices.Contains(v.Participants, oaAgentName) {
							return errors.New("the posting agent did not become a participant")
						}
						return nil
					})}, ids)
			}},
		{name: "message post idempotent", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"only once"}`,
			header: map[string]string{"Idempotency-Key": "oa-message-1"}, status: 201, check: postKey},
		{name: "message post message and content differ", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"a","content":"b"}`, status: 400, code: "invalid_argument"},
		{name: "message post missing message", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post blank", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"content":"\n"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post malformed JSON", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message"`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post too long", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"` + longMessage + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post bad Idempotency-Key", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"x"}`, header: map[string]string{"Idempotency-Key": "é"}, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post no credentials", method: "POST", path: convs + "/{conv}/messages", auth: "none", body: `{"message":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "message post wrong digest", method: "POST", path: convs + "/{conv}/messages", auth: "agent-bad-digest", body: `{"message":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "message post without messaging:write", method: "POST", path: convs + "/{conv}/messages", auth: "mr", body: `{"message":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "message post data token", method: "POST", path: convs + "/{conv}/messages", auth: "data", body: `{"message":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "message post unknown conversation", method: "POST", path: convs + "/999999/messages", auth: "mw", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "message post neither id nor uuid", method: "POST", path: convs + "/general/messages", auth: "mw", body: `{"message":"x"}`, req: oaInvalid, status: 404, code: "not_found"},
		{name: "message post conversation of another project", method: "POST", path: convs + "/{otherConv}/messages", auth: "mw", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "message post via another project", method: "POST", path: "/api/projects/{otherProject}/conversations/{otherConvUUID}/messages", auth: "mw", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "message post body over 1 MiB", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// GET .../conversations/{conversationId}/messages
		{name: "messages list", method: "GET", path: convs + "/{conv}/messages", auth: "mr", status: 200,
			check: func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) < 3 || items[0]["content"] != "hello" || items[1]["content"] != "second" || items[2]["content"] != "third" {
					t.Errorf("the messages are not the conversation's, oldest first: %.500s", r.body)
				}
			}},
		{name: "messages list by uuid as agent", method: "GET", path: convs + "/{convUUID}/messages", auth: "agent", status: 200},
		{name: "messages list pages with Link", method: "GET", path: convs + "/{conv}/messages?limit=1", auth: "mr", status: 200, check: oaPages("mr", convs+"/{conv}/messages")},
		{name: "messages list of a new conversation", method: "GET", path: convs + "/{emptyConv}/messages", auth: "mr", status: 200, check: oaLen(1, 1)},
		{name: "messages list limit not a number", method: "GET", path: convs + "/{conv}/messages?limit=abc", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "messages list negative after_id", method: "GET", path: convs + "/{conv}/messages?after_id=-1", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "messages list no credentials", method: "GET", path: convs + "/{conv}/messages", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "messages list without messaging:read", method: "GET", path: convs + "/{conv}/messages", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "messages list task token", method: "GET", path: convs + "/{conv}/messages", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "messages list unknown conversation", method: "GET", path: convs + "/424242/messages", auth: "mr", status: 404, code: "not_found"},
		{name: "messages list conversation of another project", method: "GET", path: convs + "/{otherConvUUID}/messages", auth: "mr", status: 404, code: "not_found"},

		// GET .../conversations/{conversationId}/tasks
		{name: "conversation tasks", method: "GET", path: convs + "/{conv}/tasks", auth: "all", status: 200, check: linked},
		{name: "conversation tasks by uuid as agent", method: "GET", path: convs + "/{convUUID}/tasks", auth: "agent", status: 200, check: linked},
		{name: "conversation tasks pages with Link", method: "GET", path: convs + "/{conv}/tasks?limit=1", auth: "all", status: 200, check: oaPages("all", convs+"/{conv}/tasks")},
		{name: "conversation tasks of an unlinked conversation", method: "GET", path: convs + "/{emptyConv}/tasks", auth: "all", status: 200, check: oaLen(0, 0)},
		{name: "conversation tasks bad limit", method: "GET", path: convs + "/{conv}/tasks?limit=-5", auth: "all", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation tasks no credentials", method: "GET", path: convs + "/{conv}/tasks", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation tasks without task:read", method: "GET", path: convs + "/{conv}/tasks", auth: "msg", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation tasks without messaging:read", method: "GET", path: convs + "/{conv}/tasks", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation tasks unknown conversation", method: "GET", path: convs + "/777/tasks", auth: "all", status: 404, code: "not_found"},
		{name: "conversation tasks of another project", method: "GET", path: convs + "/{otherConv}/tasks", auth: "all", status: 404, code: "not_found"},

		// POST .../conversations/{conversationId}/documents
		upload(oaCase{name: "document upload", path: convs + "/{conv}/documents", auth: "mw", status: 201,
			check: docIs("more-notes.txt", "text/plain", "test", 10)}, notes, notesHeader),
		upload(oaCase{name: "document upload by agent via uuid", path: convs + "/{convUUID}/documents", auth: "agent", status: 201,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				docIs("more-notes.txt", "text/plain", oaAgentName, 10)(t, h, r, ids)
				h.call(t, oaCase{method: "GET", path: convs + "/{conv}", auth: "mr", status: 200,
					check: convIs(func(_ *oaHarness, v model.Conversation) error {
						if !slices.Contains(v.Participants, oaAgentName) {
							return errors.New("the uploading agent did not become a participant")
						}
						return nil
					})}, ids)
			}}, notes, notesHeader),
		upload(oaCase{name: "document upload with other parts", path: convs + "/{conv}/documents", auth: "msg", status: 201,
			check: docIs("plan-2.md", "text/markdown", "test", 6)}, withComment, withCommentHeader),
		upload(oaCase{name: "document upload type from the extension", path: convs + "/{conv}/documents", auth: "mw", status: 201,
			check: docIs("data.json", "application/json", "test", 7)}, byExtension, byExtensionHeader),
		upload(oaCase{name: "document upload sanitised name", path: convs + "/{conv}/documents", auth: "mw", status: 201,
			check: docIs("txt.exe", "", "test", 2)}, disguised, disguisedHeader),
		upload(oaCase{name: "document upload without a file part", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"}, noFile, noFileHeader),
		upload(oaCase{name: "document upload as JSON", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"}, `{"file":"x"}`, nil),
		upload(oaCase{name: "document upload malformed multipart", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"}, "--nope\r\njunk", malformedHeader),
		upload(oaCase{name: "document upload no credentials", path: convs + "/{conv}/documents", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"}, notes, notesHeader),
		upload(oaCase{name: "document upload wrong digest", path: convs + "/{conv}/documents", auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"}, notes, notesHeader),
		upload(oaCase{name: "document upload without messaging:write", path: convs + "/{conv}/documents", auth: "mr", req: oaInvalid, status: 403, code: "forbidden"}, notes, notesHeader),
		upload(oaCase{name: "document upload unknown conversation", path: convs + "/31337/documents", auth: "mw", status: 404, code: "not_found"}, notes, notesHeader),
		upload(oaCase{name: "document upload conversation of another project", path: convs + "/{otherConv}/documents", auth: "mw", status: 404, code: "not_found"}, notes, notesHeader),
		upload(oaCase{name: "document upload over 25 MiB", path: convs + "/{conv}/documents", auth: "mw", status: 413, code: "payload_too_large"}, overLimit, overLimitHeader),
		upload(oaCase{name: "document upload body over the upload limit", path: convs + "/{conv}/documents", auth: "mw", status: 413, code: "payload_too_large"}, farOver, farOverHeader),

		// GET .../conversations/{conversationId}/documents
		{name: "documents list", method: "GET", path: convs + "/{conv}/documents", auth: "mr", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) < 3 || items[0]["id"] != float64(h.doc) || items[0]["name"] != "notes.txt" || items[0]["size"] != float64(10) {
					t.Errorf("the documents are not the conversation's, oldest first: %.500s", r.body)
				}
			}},
		{name: "documents list by uuid as agent", method: "GET", path: convs + "/{convUUID}/documents", auth: "agent", status: 200},
		{name: "documents list pages with Link", method: "GET", path: convs + "/{conv}/documents?limit=1", auth: "mr", status: 200, check: oaPages("mr", convs+"/{conv}/documents")},
		{name: "documents list of a conversation without documents", method: "GET", path: convs + "/{emptyConv}/documents", auth: "mr", status: 200, check: oaLen(0, 0)},
		{name: "documents list bad limit", method: "GET", path: convs + "/{conv}/documents?limit=0", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "documents list no credentials", method: "GET", path: convs + "/{conv}/documents", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "documents list without messaging:read", method: "GET", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "documents list unknown conversation", method: "GET", path: convs + "/555/documents", auth: "mr", status: 404, code: "not_found"},

		// GET .../conversations/{conversationId}/documents/{docId}
		{name: "document download", method: "GET", path: convs + "/{conv}/documents/{doc}", auth: "mr", status: 200, check: download("some notes", "notes.txt", false)},
		{name: "document download by uuid as agent", method: "GET", path: convs + "/{convUUID}/documents/{doc}", auth: "agent", status: 200, check: download("some notes", "notes.txt", false)},
		{name: "document download non-ASCII name", method: "GET", path: convs + "/{conv}/documents/{docUnicode}", auth: "mr", status: 200, check: download("some notes", "résumé.txt", true)},
		{name: "document download id not an integer", method: "GET", path: convs + "/{conv}/documents/abc", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "document download id 0", method: "GET", path: convs + "/{conv}/documents/0", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "document download no credentials", method: "GET", path: convs + "/{conv}/documents/{doc}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "document download without messaging:read", method: "GET", path: convs + "/{conv}/documents/{doc}", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "document download unknown document", method: "GET", path: convs + "/{conv}/documents/999999", auth: "mr", status: 404, code: "not_found"},
		{name: "document download via another conversation", method: "GET", path: convs + "/{emptyConv}/documents/{doc}", auth: "mr", status: 404, code: "not_found"},
		{name: "document download from another project", method: "GET", path: "/api/projects/{otherProject}/conversations/{conv}/documents/{doc}", auth: "otherMsg", status: 404, code: "not_found"},
		{name: "document download of another project", method: "GET", path: convs + "/{otherConv}/documents/{otherDoc}", auth: "mr", status: 404, code: "not_found"},
	}
}

// oaEventScenarios cover the handshake of the event stream: the upgrade itself (101)
// and every refusal. TestOpenAPIEventStream checks the frames that follow a 101.
func oaEventScenarios() []oaCase {
	ws := oaHandshake()
	return []oaCase{
		{name: "events upgrade", method: "GET", path: "/api/events", auth: "ro", header: ws, status: 101, check: oaUpgraded},
		{name: "events upgrade with messaging:read", method: "GET", path: "/api/events", auth: "mr", header: ws, status: 101, check: oaUpgraded},
		{name: "events upgrade with access_token", method: "GET", path: "/api/events", auth: "query:msg", header: ws, status: 101, check: oaUpgraded},
		{name: "events upgrade as agent", method: "GET", path: "/api/events?project_id={project}", auth: "agent", header: ws, status: 101, check: oaUpgraded},
		{name: "events upgrade since 0", method: "GET", path: "/api/events?since=0", auth: "rw", header: ws, status: 101, check: oaUpgraded},
		{name: "events upgrade from the server's own origin", method: "GET", path: "/api/events", auth: "ro", header: oaHandshake("Origin", "{origin}"), status: 101, check: oaUpgraded},
		{name: "events plain GET", method: "GET", path: "/api/events", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "events since not an integer", method: "GET", path: "/api/events?since=abc", auth: "ro", header: ws, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "events negative since", method: "GET", path: "/api/events?since=-1", auth: "ro", header: ws, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "events without Sec-WebSocket-Version", method: "GET", path: "/api/events", auth: "ro", header: oaHandshake("Sec-WebSocket-Version", ""),
			req: oaInvalid, status: 400, code: "invalid_argument", check: oaRefusedHandshake},
		{name: "events malformed Sec-WebSocket-Key", method: "GET", path: "/api/events", auth: "ro", header: oaHandshake("Sec-WebSocket-Key", "not-16-bytes"),
			req: oaInvalid, status: 400, code: "invalid_argument", check: oaRefusedHandshake},
		{name: "events no credentials", method: "GET", path: "/api/events", auth: "none", header: ws, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "events wrong token", method: "GET", path: "/api/events", auth: "raw:Bearer adk_0000000000000000000000000000000000000000", header: ws, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "events not a Bearer header", method: "GET", path: "/api/events", auth: "raw:Basic b2E6b2E=", header: ws, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "events wrong access_token", method: "GET", path: "/api/events?access_token=adk_0000000000000000000000000000000000000000", auth: "none", header: ws, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "events agent without project_id", method: "GET", path: "/api/events", auth: "agent", header: ws, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "events agent with another project_id", method: "GET", path: "/api/events?project_id={otherProject}", auth: "agent", header: ws, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "events wrong digest", method: "GET", path: "/api/events?project_id={project}", auth: "agent-bad-digest", header: ws, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "events without a read scope", method: "GET", path: "/api/events", auth: "wo", header: ws, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "events write-only access_token", method: "GET", path: "/api/events", auth: "query:mw", header: ws, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "events data token", method: "GET", path: "/api/events", auth: "data", header: ws, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "events foreign origin", method: "GET", path: "/api/events", auth: "ro", header: oaHandshake("Origin", "https://evil.example"), status: 403, code: "forbidden", check: oaRefusedHandshake},
	}
}

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
		internal("get", "GET", "/api/tasks/1", "ro", ""),
		internal("delete", "DELETE", "/api/tasks/1", "wo", ""),
		internal("status", "PUT", "/api/tasks/1/status", "wo", `{"status":"Done"}`),
		internal("agent", "PUT", "/api/tasks/1/agent", "wo", `{"agent_id":null}`),
		internal("step", "PUT", "/api/tasks/1/steps/0/status", "wo", `{"status":"completed"}`),
		internal("respond", "POST", "/api/tasks/1/respond", "wo", `{"response":"x"}`),
		internal("callback", "POST", "/api/agent_callback/1", "agent", `{"project_id":"{project}"}`),
		internal("project list", "GET", "/api/projects/{project}/tasks", "agent", ""),
		internal("project get", "GET", "/api/projects/{project}/tasks/1", "ro", ""),
		internal("conversations list", "GET", "/api/projects/{project}/conversations", "mr", ""),
		internal("conversation create", "POST", "/api/projects/{project}/conversations", "mw", `{"message":"m"}`),
		internal("conversation get", "GET", "/api/projects/{project}/conversations/1", "agent", ""),
		internal("messages list", "GET", "/api/projects/{project}/conversations/1/messages", "mr", ""),
		internal("message post", "POST", "/api/projects/{project}/conversations/1/messages", "agent", `{"message":"m"}`),
		internal("conversation tasks", "GET", "/api/projects/{project}/conversations/1/tasks", "all", ""),
		internal("documents list", "GET", "/api/projects/{project}/conversations/1/documents", "mr", ""),
		{name: "document upload", method: "POST", path: "/api/projects/{project}/conversations/1/documents", auth: "mw", body: upload, header: uploadHeader, status: 500, code: "internal"},
		internal("document download", "GET", "/api/projects/{project}/conversations/1/documents/1", "mr", ""),
		{name: "events", method: "GET", path: "/api/events", auth: "ro", header: oaHandshake(), status: 500, code: "internal"},
	}
}

// TestOpenAPIScenarios sends real requests to a real server (real SQLite file,
// 127.0.0.1) and checks every request and answer against openapi.json.
func TestOpenAPIScenarios(t *testing.T) {
	doc := oaLoad(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	covered := map[string]bool{}

	h := newOAHarness(t, router, covered)
	names := map[string]bool{}
	for _, c := range slices.Concat(oaScenarios(), oaConversationScenarios(), oaEventScenarios(), oaServiceScenarios(), oaVectorScenarios()) {
		if names[c.name] {
			t.Fatalf("two scenarios are called %q", c.name)
		}
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) { h.call(t, c, map[string]int64{}) })
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
		broken := newOAHarness(t, router, covered)
		if err := broken.env.Service.Store().Close(); err != nil {
			t.Fatalf("close the database: %v", err)
		}
		for _, c := range slices.Concat(oaBrokenScenarios(), oaVectorBrokenScenarios()) {
			t.Run(c.name, func(t *testing.T) { broken.call(t, c, map[string]int64{}) })
		}
	})

	// Every status the document promises must have been answered by some scenario.
	for key, op := range oaOperations(doc) {
		method, path, _ := strings.Cut(key, " ")
		for code := range op.Responses.Map() {
			if !covered[method+" "+path+" "+code] {
				t.Errorf("openapi.json documents %s %s answering %s, but no scenario produced it", method, path, code)
			}
		}
	}
}

// TestOpenAPIEventStream reads real frames of the event stream, live and replayed,
// makes a change of every kind so that every EventType occurs, and validates each frame
// against the document's Event schema (OpenAPI cannot attach a schema to WebSocket
// frames, so the scenarios of TestOpenAPIScenarios stop at the 101).
func TestOpenAPIEventStream(t *testing.T) {
	doc := oaLoad(t)
	eventSchema := oaSchema(t, doc, "Event")
	types := oaStrings(oaSchema(t, doc, "EventType").Enum)
	env := testenv.Start(t)
	p := env.Project.ID
	ctx, owner := context.Background(), auth.Owner(p)
	tok := env.Token(t, p, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite, auth.Admin) // admin: member.* events
	wsURL := strings.Replace(env.URL, "http://", "ws://", 1) + "/api/events"
	dial := func(query string) *websocket.Conn {
		t.Helper()
		conn, resp, err := websocket.DefaultDialer.Dial(wsURL+query, http.Header{"Authorization": {"Bearer " + tok}})
		if err != nil {
			t.Fatalf("dial %s: %v (%v)", query, err, resp)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	// read reads one frame, validates it and returns it decoded and raw.
	read := func(conn *websocket.Conn) (model.Event, []byte) {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		kind, raw, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("read frame: %v", err)
		}
		if kind != websocket.TextMessage {
			t.Fatalf("frame of kind %d, want a text frame", kind)
		}
		var v any
		var e model.Event
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("frame is not JSON: %v: %s", err, raw)
		}
		if err := eventSchema.VisitJSON(v, oaSchemaOptions...); err != nil {
			t.Errorf("frame does not match the Event schema: %v\nframe: %.1000s", err, raw)
		}
		_ = json.Unmarshal(raw, &e)
		if e.ProjectID != p {
			t.Errorf("frame of project %q, want %q", e.ProjectID, p)
		}
		return e, raw
	}
	live := dial("")

	// One change of every kind.
	do := func(r testenv.Request, status int) *testenv.Response {
		t.Helper()
		if r.Token == "" && r.Header == nil {
			r.Token = tok
		}
		res := env.Do(t, r)
		if res.Status != status {
			t.Fatalf("%s %s: %d %s", r.Method, r.Path, res.Status, res.Body)
		}
		return res
	}
	streamer := env.Agent(t, p, "oa-stream")
	var task model.Task
	do(testenv.Request{Method: "POST", Path: "/api/tasks", Body: `{"summary":"streamed","steps":[{"title":"one"}]}`}, 201).JSON(t, &task)
	do(testenv.Request{Method: "PUT", Path: fmt.Sprintf("/api/tasks/%d/status", task.ID), Body: `{"status":"Waiting","waiting_details":"?"}`}, 200)
	do(testenv.Request{Method: "DELETE", Path: fmt.Sprintf("/api/tasks/%d", task.ID)}, 204)
	var conv model.Conversation
	convs := "/api/projects/" + p + "/conversations"
	do(testenv.Request{Method: "POST", Path: convs, Body: `{"message":"hello","name":"stream"}`}, 201).JSON(t, &conv)
	var msg model.Message
	do(testenv.Request{Method: "POST", Path: fmt.Sprintf("%s/%d/messages", convs, conv.ID), Body: `{"message":"from the agent"}`,
		Header: env.AgentHeaders(t, p, "oa-stream")}, 201).JSON(t, &msg)
	body, header := oaMultipart([4]string{"file", "notes.txt", "text/plain", "some notes"})
	do(testenv.Request{Method: "POST", Path: fmt.Sprintf("%s/%d/documents", convs, conv.ID), Body: body,
		Header: http.Header{"Content-Type": {header["Content-Type"]}}, Token: tok}, 201)
	if _, err := env.Service.AddReaction(ctx, owner, msg.ID, "👍"); err != nil {
		t.Fatalf("add reaction: %v", err)
	}
	if _, err := env.Service.RemoveReaction(ctx, owner, msg.ID, "👍"); err != nil {
		t.Fatalf("remove reaction: %v", err)
	}
	guest := service.ParticipantInput{Kind: model.ActorUser, Name: "guest"}
	if _, err := env.Service.AddParticipant(ctx, owner, conv.UUID, guest); err != nil {
		t.Fatalf("add participant: %v", err)
	}
	if _, err := env.Service.RemoveParticipant(ctx, owner, conv.UUID, guest); err != nil {
		t.Fatalf("remove participant: %v", err)
	}
	profile := "streams its events"
	if _, err := env.Service.UpdateAgent(ctx, owner, streamer.ID, service.UpdateAgentInput{Description: &profile}); err != nil {
		t.Fatalf("update agent: %v", err)
	}
	if err := env.Service.DeleteAgent(ctx, owner, env.Agent(t, p, "oa-gone").ID); err != nil {
		t.Fatalf("delete agent: %v", err)
	}
	member, err := env.Service.AddMember(ctx, owner, service.AddMemberInput{Name: "oa-member", Role: "member"})
	if err != nil {
		t.Fatalf("add member: %v", err)
	}
	if _, err := env.Service.SetMemberRole(ctx, owner, member.UserID, "viewer"); err != nil {
		t.Fatalf("set member role: %v", err)
	}
	if err := env.Service.RemoveMember(ctx, owner, member.UserID); err != nil {
		t.Fatalf("remove member: %v", err)
	}
	_, made, err := env.Service.CreateToken(ctx, owner, service.CreateTokenInput{Name: "oa-streamed", Scopes: []string{auth.TaskRead}})
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	_, rotated, err := env.Service.RotateToken(ctx, owner, made.ID)
	if err != nil {
		t.Fatalf("rotate token: %v", err)
	}
	if err := env.Service.RevokeToken(ctx, owner, rotated.ID); err != nil {
		t.Fatalf("revoke token: %v", err)
	}
	if _, err := env.Service.RotateProjectSecret(ctx, owner); err != nil {
		t.Fatalf("rotate the project's secret: %v", err)
	}
	spaceName, docName, docText := "oa-space", "oa-doc", "agentdesk keeps its state in one SQLite file."
	space, err := env.Service.Knowledge().CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: &spaceName})
	if err != nil {
		t.Fatalf("create space: %v", err)
	}
	vdoc, err := env.Service.Knowledge().AddDocument(ctx, owner, space.ID, service.AddVectorDocumentInput{Name: &docName, Text: &docText})
	if err != nil {
		t.Fatalf("add document: %v", err)
	}
	if _, err := env.Service.Knowledge().LinkSpace(ctx, owner, space.ID, streamer.ID); err != nil {
		t.Fatalf("link space: %v", err)
	}
	if err := env.Service.Knowledge().DeleteDocument(ctx, owner, space.ID, vdoc.ID); err != nil {
		t.Fatalf("delete document: %v", err)
	}
	if err := env.Service.Knowledge().DeleteSpace(ctx, owner, space.ID); err != nil {
		t.Fatalf("delete space: %v", err)
	}
	platformChanges(t, env, owner, streamer) // platform_test.go: skill.*, job.*, budget.*

	// Every change arrives live, in order.
	seen := map[string]int{}
	var frames [][]byte
	var first, last int64
	for len(seen) < len(types)-2 { // all but stream.reset and project.created, which came before the connection
		e, raw := read(live)
		if e.Seq <= last {
			t.Fatalf("seq %d after %d", e.Seq, last)
		}
		if first == 0 {
			first = e.Seq
		}
		last = e.Seq
		seen[e.Type]++
		frames = append(frames, raw)
		if len(frames) > 100 {
			t.Fatalf("no event of some types after 100 frames: saw %v", seen)
		}
	}
	for _, typ := range types {
		if typ != "stream.reset" && typ != "project.created" && seen[typ] == 0 {
			t.Errorf("no %s event arrived", typ)
		}
	}

	// The replay from the start begins with the project's creation, then gives the
	// frames that came live.
	replay := dial("?since=0")
	for seq := int64(1); seq < first; seq++ { // the token reads every event: no gaps
		if e, _ := read(replay); e.Seq != seq || seq == 1 && e.Type != "project.created" {
			t.Errorf("replayed event %d is %d %s; the first must be project.created", seq, e.Seq, e.Type)
		}
	}
	for i, want := range frames {
		if _, got := read(replay); !bytes.Equal(got, want) {
			t.Errorf("replayed frame %d is %s, live it was %s", i, got, want)
		}
	}

	// A since past the newest event gets stream.reset.
	if e, _ := read(dial("?since=999999")); e.Type != "stream.reset" {
		t.Errorf("since past the newest event: first frame %s, want stream.reset", e.Type)
	}
}

// oaServiceScenarios cover the backup download and the about answer (backup.go).
func oaServiceScenarios() []oaCase {
	sqliteFile := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		if !bytes.HasPrefix(r.body, []byte("SQLite format 3\x00")) {
			t.Fatalf("the backup is not an SQLite file: %.40q", r.body)
		}
	}
	aboutFields := func(admin bool) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
			v := r.object(t)
			if v["version"] == "" || (v["dataDir"] != nil) != admin {
				t.Fatalf("about with admin=%v: %v", admin, v)
			}
		}
	}
	return []oaCase{
		{name: "backup", method: "GET", path: "/api/backup", auth: "desktop", status: 200, check: sqliteFile},
		{name: "backup by one project's admin", method: "GET", path: "/api/backup", auth: "admin", status: 403, code: "forbidden"},
		{name: "backup without admin", method: "GET", path: "/api/backup", auth: "all", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "backup no credentials", method: "GET", path: "/api/backup", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "about", method: "GET", path: "/api/about", auth: "ro", status: 200, check: aboutFields(false)},
		{name: "about as admin", method: "GET", path: "/api/about", auth: "admin", status: 200, check: aboutFields(true)},
		{name: "about with a data token", method: "GET", path: "/api/about", auth: "data", status: 403, code: "forbidden"},
		{name: "about no credentials", method: "GET", path: "/api/about", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
	}
}
