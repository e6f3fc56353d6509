package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestOpenAPIHead sends every GET scenario again as HEAD and validates the answer
// against the GET operation: same status, headers valid, no body. A HEAD never
// upgrades to a WebSocket: where GET upgrades (or the WebSocket library refuses the
// handshake), HEAD answers as to a plain GET, 400.
func TestOpenAPIHead(t *testing.T) {
	doc := oaLoad(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	h := newOAHarness(t, "sqlite", router, map[string]bool{})
	n := 0
	for _, c := range slices.Concat(oaScenarios(), oaConversationScenarios(), oaEventScenarios(), oaServiceScenarios(), oaVectorScenarios()) {
		if c.method != http.MethodGet {
			continue
		}
		n++
		// The upgrade, the count of a credential's sockets (429) and the Origin check of
		// the WebSocket library come after "not a WebSocket" (400); the library's other
		// refusals are 400 already.
		if c.header["Upgrade"] != "" && (c.status == http.StatusSwitchingProtocols || c.status == http.StatusTooManyRequests || c.header["Origin"] != "") {
			c.status = http.StatusBadRequest
		}
		c.method, c.code, c.check = http.MethodHead, "", nil
		t.Run(c.name, func(t *testing.T) {
			r := h.call(t, c, map[string]int64{})
			if len(r.body) != 0 {
				t.Errorf("HEAD %s: %d bytes of body", c.path, len(r.body))
			}
		})
	}
	if n < 50 {
		t.Fatalf("only %d GET scenarios", n)
	}
}

// TestOpenAPIMethodNotAllowed sends every method a path of the document does not take:
// 405, an Allow header listing exactly the methods the document gives the path (HEAD
// with GET), both valid under the MethodNotAllowed response of the document.
func TestOpenAPIMethodNotAllowed(t *testing.T) {
	doc := oaLoad(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	env := testenv.Start(t)
	resp := doc.Components.Responses["MethodNotAllowed"].Value
	bodySchema := resp.Content.Get("application/json").Schema.Value
	allowSchema := resp.Headers["Allow"].Value.Schema.Value
	params := regexp.MustCompile(`\{[A-Za-z]+\}`)
	n := 0
	for path := range doc.Paths.Map() {
		concrete := params.ReplaceAllString(path, "1")
		// The methods the document gives this concrete path. GET and PATCH
		// /api/tasks/{id} take /api/tasks/done too (and DELETE and PATCH take
		// /api/tasks/counts), and answer 400 as to any id that is not an integer.
		var allowed []string
		if concrete == "/api/tasks/done" {
			allowed = []string{"GET", "HEAD", "PATCH"}
		}
		if concrete == "/api/tasks/counts" { // and DELETE and PATCH /api/tasks/{id} take counts
			allowed = []string{"DELETE", "PATCH"}
		}
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
			probe, _ := http.NewRequest(m, env.URL+concrete, nil)
			if m == "HEAD" {
				probe.Method = "GET"
			}
			if _, _, err := router.FindRoute(probe); err == nil {
				allowed = append(allowed, m)
			}
		}
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			if slices.Contains(allowed, m) {
				continue
			}
			n++
			r := env.Do(t, testenv.Request{Method: m, Path: concrete})
			allow := r.Header.Get("Allow")
			if r.Status != http.StatusMethodNotAllowed || !sameSet(strings.Split(allow, ", "), allowed) {
				t.Errorf("%s %s: %d, Allow %q; want 405 with Allow %v", m, concrete, r.Status, allow, allowed)
				continue
			}
			if err := allowSchema.VisitJSON(allow, oaSchemaOptions...); err != nil {
				t.Errorf("%s %s: Allow %q does not match the document: %v", m, concrete, allow, err)
			}
			if m == "HEAD" {
				continue // no body
			}
			var body any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Errorf("%s %s: the 405 is not JSON: %s", m, concrete, r.Body)
				continue
			}
			if err := bodySchema.VisitJSON(body, oaSchemaOptions...); err != nil {
				t.Errorf("%s %s: the 405 does not match the document: %v: %s", m, concrete, err, r.Body)
			}
		}
	}
	if n < 60 {
		t.Fatalf("only %d wrong methods tried", n)
	}
}

// TestOpenAPILinks: every link of the document names an operation that exists and
// fills only path parameters that operation has, from runtime expressions of the
// forms used here; every 201 of an object with a URL documents Location.
func TestOpenAPILinks(t *testing.T) {
	doc := oaLoad(t)
	ops := map[string]*openapi3.Operation{}
	for _, op := range oaOperations(doc) {
		ops[op.OperationID] = op
	}
	expr := regexp.MustCompile(`^\$(response\.body#/[a-z_]+|request\.path\.[A-Za-z]+)$`)
	n := 0
	for key, op := range oaOperations(doc) {
		for status, resp := range op.Responses.Map() {
			for name, link := range resp.Value.Links {
				n++
				target := ops[link.Value.OperationID]
				if target == nil {
					t.Errorf("%s %s link %s: no operation %q", key, status, name, link.Value.OperationID)
					continue
				}
				for param, v := range link.Value.Parameters {
					if target.Parameters.GetByInAndName("path", param) == nil && doc.Paths.Find(oaPathOf(doc, target)).Parameters.GetByInAndName("path", param) == nil {
						t.Errorf("%s %s link %s: %s has no path parameter %s", key, status, name, link.Value.OperationID, param)
					}
					if s, _ := v.(string); !expr.MatchString(s) {
						t.Errorf("%s %s link %s: parameter %s is %v", key, status, name, param, v)
					}
				}
			}
			if status == "201" && (resp.Value.Description == nil || !strings.Contains(*resp.Value.Description, "no `Location`")) && resp.Value.Headers["Location"] == nil {
				t.Errorf("%s: its 201 documents no Location", key)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d links", n)
	}
}

func oaPathOf(doc *openapi3.T, op *openapi3.Operation) string {
	for path, item := range doc.Paths.Map() {
		for _, o := range item.Operations() {
			if o == op {
				return path
			}
		}
	}
	return ""
}

// oaSharedResponses are the responses every operation shares (TestOpenAPIDocumentMatchesCode
// checks which operations list them). Routing, the credential rate limit and the store's
// state answer them, whatever the operation, so the scenarios need not make each one:
// TestOpenAPIMethodNotAllowed checks real 405s against MethodNotAllowed,
// TestOpenAPISharedAnswers real 429s of every operation against TooManyRequests; 503
// and 507 are the store's (its TestDiskFull and fail-stop tests make them), in the Error
// envelope that every scenario checks.
var oaSharedResponses = map[string]bool{"MethodNotAllowed": true, "TooManyRequests": true, "ServiceUnavailable": true, "InsufficientStorage": true}

// TestOpenAPISharedAnswers: from a client address limited for refused credentials, every
// operation that takes credentials answers 429, and the document lists that answer
// (status, Retry-After, body) for the operation.
func TestOpenAPISharedAnswers(t *testing.T) {
	doc := oaLoad(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	env, _ := limitedServer(t, "sqlite", true)
	const client = "203.0.113.7"
	bad := "adk_" + strings.Repeat("0", 40)
	for range 10 {
		env.Do(t, from(client, testenv.Request{Method: "GET", Path: "/api/tasks", Token: bad}))
	}
	params := regexp.MustCompile(`\{[A-Za-z]+\}`)
	n := 0
	for key, op := range oaOperations(doc) {
		if op.Security != nil && len(*op.Security) == 0 {
			continue // no credentials: nothing to limit
		}
		method, path, _ := strings.Cut(key, " ")
		req := testenv.Request{Method: method, Path: params.ReplaceAllString(path, "1"), Token: bad}
		r := env.Do(t, from(client, req))
		if r.Status != http.StatusTooManyRequests {
			t.Errorf("%s from a limited address: %d %s, want 429", key, r.Status, r.Body)
			continue
		}
		n++
		vreq, _ := http.NewRequest(method, env.URL+req.Path, nil)
		route, pathParams, err := router.FindRoute(vreq)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: pathParams, Route: route},
			Status:                 r.Status, Header: r.Header,
			Options: &openapi3filter.Options{IncludeResponseStatus: true, SchemaValidationOptions: oaSchemaOptions}}
		in.SetBodyBytes(r.Body)
		if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
			t.Errorf("%s: the 429 does not match openapi.json: %v", key, err)
		}
	}
	if n < 40 {
		t.Fatalf("only %d operations answered 429", n)
	}
}
