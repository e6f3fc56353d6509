package api_test

import (
	"bytes"
	"fmt"
	"github.com/agentdesk/agentdesk/backend/vector/vectortest"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// vectorUpload is a multipart body with one part "file".
func vectorUpload(t *testing.T, name, ctype string, content []byte) ([]byte, http.Header) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, name)}
	if ctype != "" {
		h["Content-Type"] = []string{ctype}
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(content)
	w.Close()
	return buf.Bytes(), http.Header{"Content-Type": {w.FormDataContentType()}}
}

type vectorResults struct {
	Results []model.VectorResult `json:"results"`
}

func TestVectorREST(t *testing.T) { pgtest.Engines(t, testVectorREST) }

func testVectorREST(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	p := env.Project.ID
	rw := env.TypedToken(t, p, model.TokenData, auth.VectorRead, auth.VectorWrite)
	ro := env.TypedToken(t, p, model.TokenData, auth.VectorRead)
	platform := env.Token(t, p, auth.TaskRead, auth.TaskWrite, auth.Admin)
	other := env.NewProject(t, "elsewhere")
	otherData := env.TypedToken(t, other.ID, model.TokenData, auth.VectorRead, auth.VectorWrite)

	do := func(method, path, token string, body any, header http.Header) *testenv.Response {
		return env.Do(t, testenv.Request{Method: method, Path: path, Token: token, Body: body, Header: header})
	}
	expect := func(r *testenv.Response, status int, code string) {
		t.Helper()
		if r.Status != status || r.ErrorCode() != code {
			t.Fatalf("status %d code %q, want %d %q: %s", r.Status, r.ErrorCode(), status, code, r.Body)
		}
	}

	// Who may come in.
	r := do("GET", "/api/vector/spaces", platform, nil, nil)
	expect(r, 403, "forbidden")
	if !strings.Contains(string(r.Body), "data tokens only") {
		t.Errorf("a platform token's 403 should say data tokens only: %s", r.Body)
	}
	expect(do("GET", "/api/vector/spaces", "", nil, nil), 401, "unauthenticated")
	expect(do("GET", "/api/vector/spaces", "adk_"+strings.Repeat("x", 40), nil, nil), 401, "unauthenticated")
	r = do("GET", "/api/tasks", rw, nil, nil)
	expect(r, 403, "forbidden")
	if !strings.Contains(string(r.Body), "data tokens are accepted only by the /api/vector endpoints") {
		t.Errorf("a data token on /api/tasks: %s", r.Body)
	}
	expect(do("POST", "/api/tasks", rw, map[string]any{"summary": "x"}, nil), 403, "forbidden")
	expect(do("POST", "/api/vector/spaces", ro, map[string]any{"name": "kb"}, nil), 403, "forbidden")

	// Spaces.
	r = do("POST", "/api/vector/spaces", rw, map[string]any{"name": "handbook", "description": "How we work"}, nil)
	expect(r, 201, "")
	var sp model.VectorSpace
	r.JSON(t, &sp)
	if sp.ID < 1 || sp.Name != "handbook" || sp.Documents != 0 || sp.CreatedAt.IsZero() {
		t.Fatalf("space %+v", sp)
	}
	expect(do("POST", "/api/vector/spaces", rw, map[string]any{"name": "handbook"}, nil), 409, "conflict")
	expect(do("POST", "/api/vector/spaces", rw, map[string]any{"name": " "}, nil), 400, "invalid_argument")
	expect(do("POST", "/api/vector/spaces", rw, map[string]any{"name": 3}, nil), 400, "invalid_argument")
	expect(do("POST", "/api/vector/spaces", rw, `{"name":`, nil), 400, "invalid_argument")
	sps := fmt.Sprintf("/api/vector/spaces/%d", sp.ID)

	// Another project sees nothing of it.
	expect(do("GET", sps, otherData, nil, nil), 404, "not_found")
	expect(do("POST", sps+"/search", otherData, map[string]any{"query": "x"}, nil), 404, "not_found")
	expect(do("DELETE", sps, otherData, nil, nil), 404, "not_found")
	r = do("GET", "/api/vector/spaces", otherData, nil, nil)
	expect(r, 200, "")
	if strings.TrimSpace(string(r.Body)) != "[]" {
		t.Errorf("the other project lists %s", r.Body)
	}
	expect(do("GET", "/api/vector/spaces/abc", rw, nil, nil), 400, "invalid_argument")

	// Documents: JSON text, and files of every format.
	text := "# Backups\n\nRun agentdesk backup --out FILE nightly from cron; the server keeps serving.\n\n# Ports\n\nIf port 8080 is taken, pick another with --addr or AGENTDESK_ADDR."
	r = do("POST", sps+"/documents", rw, map[string]any{"name": "ops.md", "text": text}, nil)
	expect(r, 201, "")
	var doc model.VectorDocument
	r.JSON(t, &doc)
	if doc.ID < 1 || doc.Name != "ops.md" || doc.Chunks != 2 || doc.SpaceID != sp.ID {
		t.Fatalf("document %+v", doc)
	}
	files := []struct {
		name, ctype string
		content     []byte
		want        string
	}{
		{"notes.txt", "text/plain", []byte("Plain notes about the event stream and since replay."), "since replay"},
		{"page.html", "text/html", []byte("<html><head><style>x{}</style></head><body><h2>Webhooks</h2><p>Agents learn about tasks from the <b>event stream</b>.</p><script>evil()</script></body></html>"), "## Webhooks"},
		{"guide.pdf", "", vectortest.MinimalPDF([]string{"Restoring a backup: stop the server and put the file back."}), "Restoring a backup"},
	}
	for _, f := range files {
		body, h := vectorUpload(t, f.name, f.ctype, f.content)
		r = do("POST", sps+"/documents", rw, body, h)
		expect(r, 201, "")
		var d model.VectorDocument
		r.JSON(t, &d)
		if d.Name != f.name || d.Chunks < 1 {
			t.Errorf("%s: %+v", f.name, d)
		}
		r = do("POST", sps+"/search", ro, map[string]any{"query": f.want, "k": 1}, nil)
		expect(r, 200, "")
		var res vectorResults
		r.JSON(t, &res)
		if len(res.Results) != 1 || res.Results[0].DocumentName != f.name || !strings.Contains(res.Results[0].Chunk, f.want) {
			t.Errorf("search %q: %s", f.want, r.Body)
		}
		if strings.Contains(res.Results[0].Chunk, "evil") {
			t.Errorf("script text indexed: %q", res.Results[0].Chunk)
		}
	}
	body, h := vectorUpload(t, "scan.pdf", "application/pdf", []byte("%PDF-1.4 nothing readable here"))
	expect(do("POST", sps+"/documents", rw, body, h), 400, "invalid_argument")
	body, h = vectorUpload(t, "image.png", "image/png", []byte{0x89, 'P', 'N', 'G', 0, 0, 0xff})
	expect(do("POST", sps+"/documents", rw, body, h), 400, "invalid_argument")
	expect(do("POST", sps+"/documents", rw, map[string]any{"name": "x"}, nil), 400, "invalid_argument")
	expect(do("POST", sps+"/documents", rw, map[string]any{"name": "x", "text": "a", "chunks": []any{map[string]any{"text": "b"}}}, nil), 400, "invalid_argument")
	expect(do("POST", sps+"/documents", ro, map[string]any{"name": "x", "text": "a"}, nil), 403, "forbidden")
	big := strings.Repeat("a", service.MaxDocumentSize+10)
	expect(do("POST", sps+"/documents", rw, map[string]any{"name": "big", "text": big}, nil), 413, "payload_too_large")

	// Client vectors cannot go into a space of the server's embedder.
	expect(do("POST", sps+"/documents", rw, map[string]any{"name": "v", "chunks": []any{map[string]any{"text": "t", "vector": []float32{1, 0}}}}, nil), 400, "invalid_argument")

	// Search: the ops document answers a question about ports, best first.
	r = do("POST", sps+"/search", ro, map[string]any{"query": "which port does it listen on, and how do I change it?"}, nil)
	expect(r, 200, "")
	var res vectorResults
	r.JSON(t, &res)
	if len(res.Results) == 0 || res.Results[0].DocumentID != doc.ID || !strings.Contains(res.Results[0].Chunk, "AGENTDESK_ADDR") {
		t.Fatalf("port question: %s", r.Body)
	}
	for i, x := range res.Results {
		if i > 0 && x.Score > res.Results[i-1].Score {
			t.Errorf("results not best first: %s", r.Body)
		}
		if x.Similarity == nil {
			t.Errorf("result %d lacks similarity", i)
		}
	}
	if len(res.Results) > service.DefaultVectorK {
		t.Errorf("%d results, default k is %d", len(res.Results), service.DefaultVectorK)
	}
	// Filter to one document, keyword and vector modes.
	r = do("POST", sps+"/search", ro, map[string]any{"query": "backup", "k": 10, "filter": map[string]any{"documentIds": []int64{doc.ID}}}, nil)
	expect(r, 200, "")
	res = vectorResults{}
	r.JSON(t, &res)
	for _, x := range res.Results {
		if x.DocumentID != doc.ID {
			t.Errorf("filter let document %d through", x.DocumentID)
		}
	}
	for _, mode := range []string{"keyword", "vector"} {
		r = do("POST", sps+"/search", ro, map[string]any{"query": "cron nightly backup", "mode": mode}, nil)
		expect(r, 200, "")
		res = vectorResults{}
		r.JSON(t, &res)
		if len(res.Results) == 0 || !strings.Contains(res.Results[0].Chunk, "cron") {
			t.Errorf("%s mode: %s", mode, r.Body)
		}
	}
	expect(do("POST", sps+"/search", ro, map[string]any{"query": "x", "k": 0}, nil), 400, "invalid_argument")
	expect(do("POST", sps+"/search", ro, map[string]any{"query": "x", "k": 101}, nil), 400, "invalid_argument")
	expect(do("POST", sps+"/search", ro, map[string]any{}, nil), 400, "invalid_argument")
	expect(do("POST", sps+"/search", ro, map[string]any{"query": "x", "mode": "fuzzy"}, nil), 400, "invalid_argument")
	expect(do("POST", sps+"/search", ro, map[string]any{"vector": []float32{1, 2, 3}}, nil), 400, "invalid_argument")
	expect(do("POST", sps+"/search", ro, map[string]any{"query": "x", "k": "five"}, nil), 400, "invalid_argument")

	// Lists and deletes.
	r = do("GET", sps+"/documents", ro, nil, nil)
	expect(r, 200, "")
	var docs []model.VectorDocument
	r.JSON(t, &docs)
	if len(docs) != 4 || docs[0].ID != doc.ID {
		t.Fatalf("documents %s", r.Body)
	}
	expect(do("DELETE", fmt.Sprintf("%s/documents/%d", sps, doc.ID), ro, nil, nil), 403, "forbidden")
	expect(do("DELETE", fmt.Sprintf("%s/documents/%d", sps, doc.ID), rw, nil, nil), 204, "")
	expect(do("DELETE", fmt.Sprintf("%s/documents/%d", sps, doc.ID), rw, nil, nil), 404, "not_found")
	r = do("POST", sps+"/search", ro, map[string]any{"query": "AGENTDESK_ADDR port 8080", "k": 10}, nil)
	res = vectorResults{}
	r.JSON(t, &res)
	for _, x := range res.Results {
		if x.DocumentID == doc.ID {
			t.Errorf("a deleted document is still found: %s", r.Body)
		}
	}
	r = do("GET", sps, ro, nil, nil)
	r.JSON(t, &sp)
	if sp.Documents != 3 {
		t.Errorf("space counts %+v", sp)
	}

	// A space of client vectors: dimensions fixed by the first document, checked after.
	r = do("POST", "/api/vector/spaces", rw, map[string]any{"name": "mine"}, nil)
	expect(r, 201, "")
	var mine model.VectorSpace
	r.JSON(t, &mine)
	ms := fmt.Sprintf("/api/vector/spaces/%d", mine.ID)
	chunks := []any{
		map[string]any{"text": "red apples", "vector": []float32{1, 0, 0}},
		map[string]any{"text": "green pears", "vector": []float32{0, 1, 0}},
		map[string]any{"text": "blue sky", "vector": []float32{0, 0, 2}},
	}
	expect(do("POST", ms+"/documents", rw, map[string]any{"name": "colours", "chunks": chunks}, nil), 201, "")
	expect(do("POST", ms+"/documents", rw, map[string]any{"name": "bad", "chunks": []any{map[string]any{"text": "x", "vector": []float32{1, 0}}}}, nil), 400, "invalid_argument")
	expect(do("POST", ms+"/documents", rw, map[string]any{"name": "mixed", "chunks": []any{map[string]any{"text": "x", "vector": []float32{1, 0, 0}}, map[string]any{"text": "y"}}}, nil), 400, "invalid_argument")
	expect(do("POST", ms+"/documents", rw, map[string]any{"name": "zero", "chunks": []any{map[string]any{"text": "x", "vector": []float32{0, 0, 0}}}}, nil), 400, "invalid_argument")
	expect(do("POST", ms+"/documents", rw, map[string]any{"name": "text", "text": "server embedded"}, nil), 400, "invalid_argument")
	r = do("POST", ms+"/search", ro, map[string]any{"vector": []float32{0.1, 0.9, 0}, "k": 2}, nil)
	expect(r, 200, "")
	res = vectorResults{}
	r.JSON(t, &res)
	if len(res.Results) != 2 || res.Results[0].Chunk != "green pears" || *res.Results[0].Similarity < 0.99 {
		t.Errorf("client vector search: %s", r.Body)
	}
	expect(do("POST", ms+"/search", ro, map[string]any{"vector": []float32{1, 0}}, nil), 400, "invalid_argument")
	r = do("POST", ms+"/search", ro, map[string]any{"query": "sky"}, nil) // keywords only
	expect(r, 200, "")
	res = vectorResults{}
	r.JSON(t, &res)
	if len(res.Results) != 1 || res.Results[0].Chunk != "blue sky" || res.Results[0].Similarity != nil {
		t.Errorf("keyword search in a client space: %s", r.Body)
	}
	expect(do("POST", ms+"/search", ro, map[string]any{"query": "sky", "mode": "vector"}, nil), 400, "invalid_argument")

	// Deleting a space takes its documents along.
	expect(do("DELETE", ms, rw, nil, nil), 204, "")
	expect(do("GET", ms+"/documents", ro, nil, nil), 404, "not_found")
	r = do("GET", "/api/vector/spaces", ro, nil, nil)
	var all []model.VectorSpace
	r.JSON(t, &all)
	if len(all) != 1 || all[0].ID != sp.ID {
		t.Errorf("spaces after delete: %s", r.Body)
	}
}
