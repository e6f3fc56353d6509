package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// fakeEmbeddings is a small server speaking the OpenAI /v1/embeddings API: each text's
// vector counts three topic words, so that similarity is predictable.
func fakeEmbeddings(t *testing.T, calls *atomic.Int64, fail *atomic.Bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if fail.Load() {
			http.Error(w, `{"error":"model not loaded"}`, http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "test-model" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		data := []map[string]any{}
		for i, text := range req.Input {
			l := strings.ToLower(text)
			v := []float32{0.01, float32(strings.Count(l, "cat")), float32(strings.Count(l, "dog")), float32(strings.Count(l, "bird"))}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestVectorExternalEmbedder(t *testing.T) { pgtest.Engines(t, testVectorExternalEmbedder) }

func testVectorExternalEmbedder(t *testing.T, engine string) {
	var calls atomic.Int64
	var fail atomic.Bool
	fake := fakeEmbeddings(t, &calls, &fail)
	srv := testenv.StartWithOn(t, engine, server.Config{EmbedderURL: fake.URL, EmbedderModel: "test-model"}).Server
	projects, _ := srv.Service.Projects(context.Background(), auth.Owner(""))
	token, _, err := srv.Service.CreateToken(context.Background(), auth.Owner(projects[0].ID),
		service.CreateTokenInput{Name: "kb", Type: model.TokenData, Scopes: []string{auth.VectorRead, auth.VectorWrite}})
	if err != nil {
		t.Fatal(err)
	}
	env := &testenv.Env{URL: srv.URL(), Client: &http.Client{Timeout: 30 * time.Second}}
	do := func(method, path string, body any) *testenv.Response {
		return env.Do(t, testenv.Request{Method: method, Path: path, Token: token, Body: body})
	}
	r := do("POST", "/api/vector/spaces", map[string]any{"name": "pets"})
	var sp model.VectorSpace
	r.JSON(t, &sp)
	path := fmt.Sprintf("/api/vector/spaces/%d", sp.ID)
	text := "# Cats\n\nA cat sleeps. The cat purrs.\n\n# Dogs\n\nA dog barks at the dog next door.\n\n# Birds\n\nA bird sings."
	if r = do("POST", path+"/documents", map[string]any{"name": "pets.md", "text": text}); r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	if calls.Load() == 0 {
		t.Fatal("the embedder was not called")
	}
	r = do("GET", path, nil)
	r.JSON(t, &sp)
	if sp.Embedder != "openai:test-model" || sp.Dimensions != 4 || sp.Chunks != 3 {
		t.Fatalf("space %+v", sp)
	}
	before := calls.Load()
	r = do("POST", path+"/search", map[string]any{"query": "woof, a dog", "k": 1, "mode": "vector"})
	var res vectorResults
	r.JSON(t, &res)
	if r.Status != 200 || len(res.Results) != 1 || !strings.Contains(res.Results[0].Chunk, "barks") || calls.Load() != before+1 {
		t.Fatalf("search: %d %s (calls %d -> %d)", r.Status, r.Body, before, calls.Load())
	}
	// The endpoint failing is the server's problem (500), and says nothing of it to the caller.
	fail.Store(true)
	r = do("POST", path+"/documents", map[string]any{"name": "more.md", "text": "cats"})
	if r.Status != 500 || r.ErrorCode() != "internal" || strings.Contains(string(r.Body), "model not loaded") {
		t.Fatalf("embedder down: %d %s", r.Status, r.Body)
	}
}
