package vector

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/agentdesk/agentdesk/backend/vector/vectortest"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestChunkKeepsHeadingsAndBounds(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# Install\n\nRun make build.\n\n## Backups\n\n")
	for i := 0; i < 40; i++ {
		sb.WriteString("The nightly backup copies the database while the server keeps serving requests. ")
		if i%5 == 4 {
			sb.WriteString("\n\n")
		}
	}
	chunks := Chunk(sb.String())
	if len(chunks) < 3 {
		t.Fatalf("want several chunks, got %d: %q", len(chunks), chunks)
	}
	if !strings.HasPrefix(chunks[0], "# Install") || !strings.Contains(chunks[0], "Run make build.") {
		t.Errorf("first chunk %q", chunks[0])
	}
	for i, c := range chunks[1:] {
		if !strings.HasPrefix(c, "## Backups") {
			t.Errorf("chunk %d does not start with its heading: %.60q", i+1, c)
		}
		if n := len([]rune(c)); n > MaxChunkChars {
			t.Errorf("chunk %d has %d characters, over %d", i+1, n, MaxChunkChars)
		}
	}
	if !strings.Contains(chunks[2], "…") {
		t.Errorf("no overlap marker in a continued chunk: %.200q", chunks[2])
	}
	if got := Chunk(" \n\n \n"); len(got) != 0 {
		t.Errorf("blank text gave chunks %q", got)
	}
	// One enormous paragraph without spaces is still cut within the bound.
	for _, c := range Chunk(strings.Repeat("x", 5000)) {
		if len(c) > MaxChunkChars {
			t.Errorf("a chunk of %d characters", len(c))
		}
	}
}

func TestHashEmbedder(t *testing.T) {
	e := HashEmbedder{}
	vs, _ := e.Embed(context.Background(), []string{"nightly database backups", "backup of the database every night", "GraphQL subscriptions over WebSocket", ""})
	for i, v := range vs[:3] {
		if len(v) != HashDimensions || math.Abs(float64(Dot(v, v))-1) > 1e-5 {
			t.Fatalf("vector %d is not a unit vector of %d dims", i, HashDimensions)
		}
	}
	if Dot(vs[0], vs[1]) <= Dot(vs[0], vs[2]) {
		t.Errorf("related texts are not closer (%.3f) than unrelated ones (%.3f)", Dot(vs[0], vs[1]), Dot(vs[0], vs[2]))
	}
	if Dot(vs[3], vs[3]) != 0 {
		t.Errorf("empty text should give the zero vector")
	}
	again := e.Vector("nightly database backups")
	for i := range again {
		if again[i] != vs[0][i] {
			t.Fatal("not deterministic")
		}
	}
}

func TestIndexSearchIsExact(t *testing.T) {
	e := HashEmbedder{}
	ix := &Index{Dims: HashDimensions}
	texts := []string{"alpha beta", "gamma delta", "alpha gamma", "epsilon"}
	for i := 0; i < 5000; i++ { // enough to scan in parallel
		ix.Add(int64(i+1), int64(i%7), e.Vector(texts[i%4]+" "+strings.Repeat("z", i%13)))
	}
	q := e.Vector("alpha beta")
	hits := ix.Search(q, 10, nil)
	if len(hits) != 10 {
		t.Fatalf("%d hits", len(hits))
	}
	// Compare with a full sort.
	best := float32(-2)
	for i := 0; i < ix.Len(); i++ {
		if s := Dot(q, ix.Vecs[i*ix.Dims:(i+1)*ix.Dims]); s > best {
			best = s
		}
	}
	if hits[0].Score != best {
		t.Errorf("best hit %.4f, exact best %.4f", hits[0].Score, best)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatal("hits not best first")
		}
	}
	// The filter keeps document 3 only: the answer must be exactly the best 3 of its
	// chunks by a full sort (ties: lower id first), not merely chunks that pass.
	only := ix.Search(q, 3, func(doc int64) bool { return doc == 3 })
	var want []Hit
	for i := 0; i < ix.Len(); i++ {
		if ix.Docs[i] == 3 {
			want = append(want, Hit{ix.IDs[i], Dot(q, ix.Vecs[i*ix.Dims:(i+1)*ix.Dims])})
		}
	}
	sort.Slice(want, func(i, j int) bool {
		return want[i].Score > want[j].Score || want[i].Score == want[j].Score && want[i].ID < want[j].ID
	})
	if len(want) < 3 || !slices.Equal(only, want[:3]) {
		t.Errorf("filtered search = %v, want %v", only, want[:min(3, len(want))])
	}
}

func TestFuse(t *testing.T) {
	got := Fuse([]int64{1, 2, 3}, []int64{3, 4})
	if got[0].ID != 3 { // 1/63 + 1/61 beats 1/61
		t.Errorf("fusion order %v", got)
	}
	if len(got) != 4 {
		t.Errorf("want 4 fused, got %v", got)
	}
}

func TestExtract(t *testing.T) {
	html := `<!doctype html><html><head><title>x</title><style>p{}</style></head><body><h1>Backups</h1><p>Copy the <b>database</b> nightly.</p><script>alert(1)</script><ul><li>one</li><li>two</li></ul></body></html>`
	f, err := DetectFormat("page.html", "", []byte(html))
	if err != nil || f != FormatHTML {
		t.Fatal(f, err)
	}
	text, err := ExtractText(f, []byte(html))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "# Backups") || !strings.Contains(text, "Copy the database nightly.") || strings.Contains(text, "alert") || strings.Contains(text, "p{}") {
		t.Errorf("html text %q", text)
	}
	pdf := vectortest.MinimalPDF([]string{"Knowledge bases hold documents.", "Search fuses BM25 and vectors."}, []string{"Second page (with parentheses)."})
	f, err = DetectFormat("doc", "", pdf)
	if err != nil || f != FormatPDF {
		t.Fatal(f, err)
	}
	text, err = ExtractText(f, pdf)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Knowledge bases hold documents.", "Search fuses BM25 and vectors.", "Second page (with parentheses)."} {
		if !strings.Contains(text, want) {
			t.Errorf("pdf text %q lacks %q", text, want)
		}
	}
	if _, err := ExtractText(FormatPDF, []byte("%PDF-1.4 garbage")); !errors.Is(err, ErrUnreadable) {
		t.Errorf("broken pdf: %v", err)
	}
	if _, err := DetectFormat("x.bin", "application/octet-stream", []byte{0, 1, 2, 0xff}); !errors.Is(err, ErrUnreadable) {
		t.Errorf("binary: %v", err)
	}
}

func TestOpenAIEmbedder(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad", 400)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- { // out of order, as servers may answer
			data = append(data, item{i, []float32{float32(len(req.Input[i])), 1, 0}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "model": req.Model})
	}))
	defer srv.Close()
	e := NewOpenAIEmbedder(srv.URL, "m", "k")
	e.Batch = 2
	vs, err := e.Embed(context.Background(), []string{"a", "bb", "ccc"})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(vs) != 3 || vs[0][0] != 1 || vs[2][0] != 3 || e.Dimensions() != 3 || e.Name() != "openai:m" {
		t.Errorf("calls %d vectors %v dims %d", calls, vs, e.Dimensions())
	}
	bad := NewOpenAIEmbedder(srv.URL, "m", "wrong")
	if _, err := bad.Embed(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("want the endpoint's 400, got %v", err)
	}
}
