package api_test

import (
	"encoding/json"
	"fmt"
	"github.com/agentdesk/agentdesk/backend/vector/vectortest"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// oaVectorScenarios cover /api/vector (vector.go). The fixed ones use ids that cannot
// exist; the flow of "vector space create" works on the space it creates.
func oaVectorScenarios() []oaCase {
	const spaces = "/api/vector/spaces"
	huge := strings.Repeat("x", api.MaxJSONBody+1)
	pdf, pdfHeader := oaMultipart([4]string{"file", "guide.pdf", "application/pdf", string(vectortest.MinimalPDF([]string{"Restore: stop the server, put the file back."}))})
	flow := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		var sp model.VectorSpace
		if err := jsonInto(r.body, &sp); err != nil || sp.ID < 1 || sp.Name != "kb" {
			t.Fatalf("created space: %v %s", err, r.body)
		}
		s := fmt.Sprintf("%s/%d", spaces, sp.ID)
		call := func(c oaCase) *oaResult { return h.call(t, c, ids) }
		call(oaCase{method: "POST", path: spaces, auth: "data", body: `{"name":"kb"}`, status: 409, code: "conflict"})
		call(oaCase{method: "GET", path: spaces, auth: "data", status: 200})
		call(oaCase{method: "GET", path: s, auth: "data", status: 200})
		doc := call(oaCase{method: "POST", path: s + "/documents", auth: "data", body: `{"name":"ops.md","text":"# Ports\n\nPick another port with --addr."}`, status: 201})
		call(oaCase{method: "POST", path: s + "/documents", auth: "data", body: pdf, header: pdfHeader, status: 201})
		call(oaCase{method: "POST", path: s + "/documents", auth: "data", body: `{"name":"x","chunks":[{"text":"t","vector":[1,0]}]}`, status: 400, code: "invalid_argument"})
		call(oaCase{method: "POST", path: s + "/documents", auth: "data", body: `{"name":"x","text":"` + strings.Repeat("y", service.MaxDocumentSize+2<<20) + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"})
		call(oaCase{method: "GET", path: s + "/documents", auth: "data", status: 200})
		res := call(oaCase{method: "POST", path: s + "/search", auth: "data", body: `{"query":"which port?","k":2}`, status: 200})
		if !strings.Contains(string(res.body), "--addr") {
			t.Errorf("search: %s", res.body)
		}
		call(oaCase{method: "POST", path: s + "/search", auth: "data", body: `{"query":"x","vector":[1,2]}`, status: 400, code: "invalid_argument"})
		// The document states what only prose said: exactly one of text and chunks; a query or a vector.
		call(oaCase{method: "POST", path: s + "/documents", auth: "data", body: `{"name":"x","text":"t","chunks":[{"text":"t"}]}`, req: oaInvalid, status: 400, code: "invalid_argument"})
		call(oaCase{method: "POST", path: s + "/documents", auth: "data", body: `{"name":"x"}`, req: oaInvalid, status: 400, code: "invalid_argument"})
		call(oaCase{method: "POST", path: s + "/search", auth: "data", body: `{"k":2}`, req: oaInvalid, status: 400, code: "invalid_argument"})
		call(oaCase{method: "POST", path: s + "/search", auth: "data", body: `{"query":"  "}`, req: oaInvalid, status: 400, code: "invalid_argument"})
		call(oaCase{method: "POST", path: s + "/search", auth: "data", body: `{"query":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"})
		var d model.VectorDocument
		if err := jsonInto(doc.body, &d); err != nil {
			t.Fatal(err)
		}
		call(oaCase{method: "DELETE", path: fmt.Sprintf("%s/documents/%d", s, d.ID), auth: "data", status: 204})
		call(oaCase{method: "DELETE", path: fmt.Sprintf("%s/documents/%d", s, d.ID), auth: "data", status: 404, code: "not_found"})
		call(oaCase{method: "DELETE", path: s, auth: "data", status: 204})
		call(oaCase{method: "GET", path: s, auth: "data", status: 404, code: "not_found"})
	}
	missing := spaces + "/999999"
	return []oaCase{
		{name: "vector space create", method: "POST", path: spaces, auth: "data", body: `{"name":"kb","description":"the handbook"}`, status: 201, check: flow},
		{name: "vector space create empty name", method: "POST", path: spaces, auth: "data", body: `{"name":""}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "vector space create body over 1 MiB", method: "POST", path: spaces, auth: "data", body: `{"name":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},
		{name: "vector space create platform token", method: "POST", path: spaces, auth: "all", body: `{"name":"kb2"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector space create no credentials", method: "POST", path: spaces, auth: "none", body: `{"name":"kb2"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "vector spaces platform token", method: "GET", path: spaces, auth: "admin", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector spaces no credentials", method: "GET", path: spaces, auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "vector space get unknown", method: "GET", path: missing, auth: "data", status: 404, code: "not_found"},
		{name: "vector space get bad id", method: "GET", path: spaces + "/abc", auth: "data", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "vector space get platform token", method: "GET", path: missing, auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector space get no credentials", method: "GET", path: missing, auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "vector space delete unknown", method: "DELETE", path: missing, auth: "data", status: 404, code: "not_found"},
		{name: "vector space delete bad id", method: "DELETE", path: spaces + "/0", auth: "data", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "vector space delete platform token", method: "DELETE", path: missing, auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector space delete no credentials", method: "DELETE", path: missing, auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "vector documents unknown space", method: "GET", path: missing + "/documents", auth: "data", status: 404, code: "not_found"},
		{name: "vector documents bad id", method: "GET", path: spaces + "/x/documents", auth: "data", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "vector documents platform token", method: "GET", path: missing + "/documents", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector documents no credentials", method: "GET", path: missing + "/documents", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "vector document add unknown space", method: "POST", path: missing + "/documents", auth: "data", body: `{"name":"a","text":"b"}`, status: 404, code: "not_found"},
		{name: "vector document add platform token", method: "POST", path: missing + "/documents", auth: "rw", body: `{"name":"a","text":"b"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector document add no credentials", method: "POST", path: missing + "/documents", auth: "none", body: `{"name":"a","text":"b"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "vector document delete bad id", method: "DELETE", path: missing + "/documents/abc", auth: "data", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "vector document delete platform token", method: "DELETE", path: missing + "/documents/1", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector document delete no credentials", method: "DELETE", path: missing + "/documents/1", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "vector search unknown space", method: "POST", path: missing + "/search", auth: "data", body: `{"query":"x"}`, status: 404, code: "not_found"},
		{name: "vector search k too big", method: "POST", path: missing + "/search", auth: "data", body: `{"query":"x","k":500}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "vector search platform token", method: "POST", path: missing + "/search", auth: "rw", body: `{"query":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "vector search no credentials", method: "POST", path: missing + "/search", auth: "none", body: `{"query":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
	}
}

// oaVectorBrokenScenarios: the 500 of every /api/vector operation, the database gone.
func oaVectorBrokenScenarios() []oaCase {
	internal := func(name, method, path, body string) oaCase {
		return oaCase{name: name, method: method, path: path, auth: "data", body: body, status: 500, code: "internal"}
	}
	return []oaCase{
		internal("vector spaces", "GET", "/api/vector/spaces", ""),
		internal("vector space create", "POST", "/api/vector/spaces", `{"name":"kb"}`),
		internal("vector space get", "GET", "/api/vector/spaces/1", ""),
		internal("vector space delete", "DELETE", "/api/vector/spaces/1", ""),
		internal("vector documents", "GET", "/api/vector/spaces/1/documents", ""),
		internal("vector document add", "POST", "/api/vector/spaces/1/documents", `{"name":"a","text":"b"}`),
		internal("vector document delete", "DELETE", "/api/vector/spaces/1/documents/1", ""),
		internal("vector search", "POST", "/api/vector/spaces/1/search", `{"query":"x"}`),
	}
}

func jsonInto(raw []byte, v any) error { return json.Unmarshal(raw, v) }
