package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// vectorPhase measures the knowledge bases on a server of its own (a fresh data
// directory, so that its memory does not count in the main figures):
//
//   - vector_ingest_docs_per_s: Markdown documents (about 3 KB, 3 chunks each) uploaded
//     as JSON text by 4 clients, chunked and embedded by the server's built-in embedder;
//   - vector_load_chunks_per_s: how fast the big space is filled. The chunks come with
//     client-supplied vectors (random unit vectors, 384 dims, 4 decimals) in JSON
//     uploads of 5,000 chunks each, through the real REST endpoint: this measures JSON
//     decoding, the store's inserts and the FTS5 index, not an embedder;
//   - vector_index_load_ms: the first search of that space, which decodes its vectors
//     from SQLite into memory;
//   - vector_search_p50_ms / p99: POST .../search with a random query vector (mode
//     vector: exact cosine over every chunk, top k = 10), one client, sequential;
//   - hybrid_search_p50_ms / p99: the same vector plus three words of query text, so
//     that the BM25 ranking (FTS5) and the fusion run too.
func vectorPhase(ctx context.Context, cfg config, dir string, r *report) {
	vdir := filepath.Join(dir, "vector")
	if err := os.MkdirAll(vdir, 0o700); err != nil {
		r.check("vector setup", phase{errors: 1, errSamples: []string{err.Error()}})
		return
	}
	srv := &server{bin: cfg.bin, dir: vdir, db: cfg.db}
	fail := func(what string, err error) {
		logf("  vector %s: %v", what, err)
		r.check("vector "+what, phase{errors: 1, errSamples: []string{err.Error()}})
	}
	out, err := srv.cli("project", "create", "--name", "bench-vector")
	if err != nil {
		fail("setup", err)
		return
	}
	var p struct{ ID string }
	_ = json.Unmarshal(out, &p)
	tok, err := srv.cli("token", "create", "--project", p.ID, "--name", "bench", "--type", "data", "--scopes", "vector:read,vector:write")
	if err != nil {
		fail("setup", err)
		return
	}
	token := strings.TrimSpace(string(tok))
	if err := srv.start(ctx, cfg.synchronous); err != nil {
		fail("setup", err)
		return
	}
	defer func() { _, _ = srv.stop() }()
	l := newLoader(srv.url())
	logf("\nknowledge bases (a server of their own, pid %d)", srv.pid())
	words := vocabulary(3000)
	rnd := rand.New(rand.NewPCG(1, 2))
	sentence := func(n int) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rnd.IntN(len(words))])
		}
		return sb.String()
	}
	newSpace := func(name string) (int64, error) {
		var sp struct{ ID int64 }
		err := l.post("/api/vector/spaces", token, []byte(`{"name":"`+name+`"}`), 201, &sp)
		return sp.ID, err
	}

	// a. ingest: documents per second, embedded by the server.
	docsSpace, err := newSpace("docs")
	if err != nil {
		fail("ingest", err)
		return
	}
	const docs, clients = 400, 4
	bodies := make([][]byte, docs)
	for i := range bodies {
		text := fmt.Sprintf("# Document %d\n\n%s\n\n## Details\n\n%s\n\n## Notes\n\n%s", i, sentence(150), sentence(150), sentence(150))
		bodies[i], _ = json.Marshal(map[string]string{"name": fmt.Sprintf("doc-%d.md", i), "text": text})
	}
	start := time.Now()
	var mu sync.Mutex
	var next int
	var errs errorLog
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= docs || ctx.Err() != nil {
					return
				}
				if err := l.do("POST", fmt.Sprintf("/api/vector/spaces/%d/documents", docsSpace), token, bodies[i], 201); err != nil {
					errs.add(err)
				}
			}
		}()
	}
	wg.Wait()
	ingest := phase{ok: int64(docs) - errs.n.Load(), errors: errs.n.Load(), errSamples: errs.samples, wall: time.Since(start)}
	rate := float64(ingest.ok) / ingest.wall.Seconds()
	logf("  ingest %d Markdown documents (~3 KB, builtin embedder), %d clients: %.0f documents/s (errors %d)", docs, clients, rate, ingest.errors)
	r.add("vector_ingest_docs_per_s", rate)
	r.check("vector ingest", ingest, "vector_ingest_docs_per_s")

	// b. the big space: cfg.vectorChunks chunks of 384 dims, client vectors.
	big, err := newSpace("big")
	if err != nil {
		fail("load", err)
		return
	}
	const dims, batch = 384, 5000
	start = time.Now()
	loaded := 0
	for loaded < cfg.vectorChunks && ctx.Err() == nil {
		n := min(batch, cfg.vectorChunks-loaded)
		body := make([]byte, 0, n*3300)
		body = append(body, `{"name":"part-`...)
		body = strconv.AppendInt(body, int64(loaded/batch), 10)
		body = append(body, `","chunks":[`...)
		for i := range n {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, `{"text":"`...)
			body = append(body, sentence(25)...)
			body = append(body, `","vector":[`...)
			for j, x := range randomUnit(rnd, dims) {
				if j > 0 {
					body = append(body, ',')
				}
				body = strconv.AppendFloat(body, float64(x), 'f', 4, 32)
			}
			body = append(body, "]}"...)
		}
		body = append(body, "]}"...)
		if err := l.do("POST", fmt.Sprintf("/api/vector/spaces/%d/documents", big), token, body, 201); err != nil {
			fail("load", err)
			return
		}
		loaded += n
	}
	loadWall := time.Since(start)
	logf("  load %d chunks of %d dims (client vectors, %d a request): %.1f s, %.0f chunks/s", loaded, dims, batch, loadWall.Seconds(), float64(loaded)/loadWall.Seconds())
	r.add("vector_load_chunks_per_s", float64(loaded)/loadWall.Seconds())

	// c. search latency.
	searchPath := fmt.Sprintf("/api/vector/spaces/%d/search", big)
	searchBody := func(withText bool) []byte {
		body := []byte(`{"k":10,`)
		if withText {
			body = append(body, `"query":"`+sentence(3)+`",`...)
		} else {
			body = append(body, `"mode":"vector",`...)
		}
		body = append(body, `"vector":[`...)
		for j, x := range randomUnit(rnd, dims) {
			if j > 0 {
				body = append(body, ',')
			}
			body = strconv.AppendFloat(body, float64(x), 'f', 4, 32)
		}
		return append(body, "]}"...)
	}
	start = time.Now()
	if err := l.do("POST", searchPath, token, searchBody(false), 200); err != nil {
		fail("search", err)
		return
	}
	first := float64(time.Since(start).Microseconds()) / 1000
	logf("  first search (loads the space's vectors into memory): %.1f ms", first)
	r.add("vector_index_load_ms", first)
	for _, mode := range []struct {
		name string
		text bool
	}{{"vector_search", false}, {"hybrid_search", true}} {
		// Bodies are made before the timing, so that only the request is measured.
		const n, warm = 300, 20
		queue := make([][]byte, n+warm)
		for i := range queue {
			queue[i] = searchBody(mode.text)
		}
		i := 0
		p := l.latency(ctx, warm, n, func() error {
			b := queue[i]
			i++
			return l.do("POST", searchPath, token, b, 200)
		})
		logf("  %-26s  1 client   p50 %.2f ms  p99 %.2f ms  mean %.2f ms  (%d chunks, k=10, %d requests, errors %d)",
			mode.name, p.p50, p.p99, p.latencyMean, loaded, p.ok, p.errors)
		r.add(mode.name+"_p50_ms", p.p50)
		r.add(mode.name+"_p99_ms", p.p99)
		r.check("vector "+mode.name, p, mode.name+"_p50_ms", mode.name+"_p99_ms")
	}
	_, peak, err := srv.memory()
	if err == nil {
		logf("  the vector server's peak RSS: %.1f MiB", peak)
		r.add("vector_server_peak_rss_mib", peak)
	}
}

// vocabulary is n made-up words, so that chunk text has realistic posting lists.
func vocabulary(n int) []string {
	rnd := rand.New(rand.NewPCG(7, 7))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 3+rnd.IntN(7))
		for j := range b {
			b[j] = letters[rnd.IntN(len(letters))]
		}
		out[i] = string(b)
	}
	return out
}

// randomUnit is a random direction in dims dimensions.
func randomUnit(rnd *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		x := rnd.NormFloat64()
		v[i] = float32(x)
		sum += x * x
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}
