package vector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// OpenAIEmbedder calls an OpenAI-compatible embeddings endpoint (OpenAI, Ollama,
// llama.cpp server, vLLM, LocalAI...): POST {URL}/v1/embeddings with
// {"model", "input": [texts]}, answered by {"data": [{"index", "embedding"}]}.
type OpenAIEmbedder struct {
	URL    string // base URL, e.g. http://127.0.0.1:11434 (a trailing /v1 or /v1/embeddings is accepted)
	Model  string
	APIKey string // sent as a Bearer token when set
	Client *http.Client
	// Batch is how many texts go in one request (default 64).
	Batch int

	dims atomic.Int64
}

// NewOpenAIEmbedder returns an embedder for the endpoint at baseURL.
func NewOpenAIEmbedder(baseURL, model, apiKey string) *OpenAIEmbedder {
	return &OpenAIEmbedder{URL: baseURL, Model: model, APIKey: apiKey, Client: &http.Client{Timeout: 2 * time.Minute}}
}

func (e *OpenAIEmbedder) Name() string    { return "openai:" + e.Model }
func (e *OpenAIEmbedder) Dimensions() int { return int(e.dims.Load()) }

// endpoint is the full embeddings URL.
func (e *OpenAIEmbedder) endpoint() string {
	u := strings.TrimRight(e.URL, "/")
	switch {
	case strings.HasSuffix(u, "/v1/embeddings"):
		return u
	case strings.HasSuffix(u, "/v1"):
		return u + "/embeddings"
	}
	return u + "/v1/embeddings"
}

// Embed sends the texts in batches and returns their vectors in order.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	batch := e.Batch
	if batch <= 0 {
		batch = 64
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		vecs, err := e.embedBatch(ctx, texts[start:min(len(texts), start+batch)])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *OpenAIEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, _ := json.Marshal(map[string]any{"model": e.Model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: %w", e.endpoint(), err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: %w", e.endpoint(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: %w", e.endpoint(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings endpoint %s answered %s: %.300s", e.endpoint(), resp.Status, raw)
	}
	var answer struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: the answer is not an embeddings response: %w", e.endpoint(), err)
	}
	if len(answer.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings endpoint %s returned %s for %s", e.endpoint(), errs.Count(len(answer.Data), "embedding"), errs.Count(len(texts), "text"))
	}
	out := make([][]float32, len(texts))
	for _, d := range answer.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings endpoint %s returned a bad index %d", e.endpoint(), d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings endpoint %s returned an empty embedding", e.endpoint())
		}
		if n := e.dims.Load(); n != 0 && int(n) != len(d.Embedding) {
			return nil, fmt.Errorf("embeddings endpoint %s returned %s, earlier %d", e.endpoint(), errs.Count(len(d.Embedding), "dimension"), n)
		}
		e.dims.Store(int64(len(d.Embedding)))
		out[d.Index] = d.Embedding
	}
	return out, nil
}
