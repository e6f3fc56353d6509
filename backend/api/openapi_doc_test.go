package api_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

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
		if r.Path == "/graphql" || r.Path == "/mcp" || strings.HasPrefix(r.Path, "/a2a/") || strings.HasPrefix(r.Path, "/mail/") {
			// GraphQL, MCP and A2A are not REST, nor is the page a question's email links to
			// (an HTML form for people): schema.graphql, docs/mcp.md, docs/a2a.md and
			// docs/email.md describe them, not openapi.json.
			continue
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
		string(errs.Conflict), string(errs.PreconditionFailed), string(errs.PayloadTooLarge), string(errs.RateLimited), string(errs.MethodNotAllowed), string(errs.InsufficientStorage), string(errs.Internal)}
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

	// Stoplight Prism validates nothing under a jsonSchemaDialect, even the 3.1 default.
	if doc.Extensions["jsonSchemaDialect"] != nil || bytes.Contains(api.OpenAPIDocument(), []byte(`"jsonSchemaDialect"`)) {
		t.Error("openapi.json sets jsonSchemaDialect")
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
		"PUT /api/tasks/{id}/steps/{stepNum}/status", "POST /api/tasks/{id}/respond", "POST /api/tasks/{id}/comments", "POST /api/agent_callback/{id}"} {
		op := ops[key]
		if op == nil || op.Parameters.GetByInAndName("header", "If-Match") == nil || op.Responses.Status(412) == nil {
			t.Errorf("%s does not document If-Match and 412", key)
		}
	}
	idempotent := map[string]bool{"POST /api/tasks": true, "POST /api/tasks/{id}/respond": true, "POST /api/tasks/{id}/comments": true, "POST /api/agent_callback/{id}": true,
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
		// The answers every operation shares, each a response of its own (generated
		// clients get a typed field for each): 405 for a method the path lacks (a server
		// older than this document), 429 after too many refused credentials, and for
		// writes 503 (the store stopped) and 507 (the disk is full).
		shared := map[int]string{405: "MethodNotAllowed"}
		if len(security) > 0 && key != "GET /api/events" { // the stream's own 429 says more (a credential's sockets)
			shared[429] = "TooManyRequests"
		}
		if method != "GET" && key != "POST /api/vector/spaces/{spaceId}/search" {
			shared[503], shared[507] = "ServiceUnavailable", "InsufficientStorage"
		}
		for status, name := range shared {
			if r := op.Responses.Status(status); r == nil || r.Ref != "#/components/responses/"+name {
				t.Errorf("%s does not answer %d with the %s response", key, status, name)
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
		// A paged list (after_id; search has a limit but no pages) documents its next page.
		if method == "GET" && (strings.HasSuffix(path, "/tasks") || op.Parameters.GetByInAndName("query", "after_id") != nil) {
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
