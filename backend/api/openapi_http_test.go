package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

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
	h := newOAHarness(t, router, map[string]bool{})
	n := 0
	for _, c := range slices.Concat(oaScenarios(), oaConversationScenarios(), oaEventScenarios(), oaServiceScenarios(), oaVectorScenarios()) {
		if c.method != http.MethodGet {
			continue
		}
		n++
		if c.header["Upgrade"] != "" && c.code == "" { // the upgrade, or a refusal of the WebSocket library
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
		// The methods the document gives this concrete path. GET /api/tasks/{id} takes
		// /api/tasks/done too, and answers 400 as to any id that is not an integer.
		var allowed []string
		if concrete == "/api/tasks/done" {
			allowed = []string{"GET", "HEAD"}
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
