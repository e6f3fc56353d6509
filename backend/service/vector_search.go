package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/vector"
)

// VectorSearchInput is a search: query text, or a query vector, or both (the vector
// then ranks by similarity and the text by keywords).
type VectorSearchInput struct {
	Query  *string            `json:"query"`
	Vector []float32          `json:"vector"`
	K      *int               `json:"k"`
	Filter *VectorFilterInput `json:"filter"`
	// Mode picks the rankings: "hybrid" (default: both, fused), "vector" or "keyword".
	Mode string `json:"mode"`
}

// VectorFilterInput narrows a search.
type VectorFilterInput struct {
	DocumentIDs []int64 `json:"documentIds"` // only chunks of these documents
}

// Search modes.
const (
	VectorModeHybrid  = "hybrid"
	VectorModeVector  = "vector"
	VectorModeKeyword = "keyword"
)

// Search finds the k chunks of a space that best answer the query, best first.
// Two rankings are fused by reciprocal rank (k=60): exact cosine similarity between
// the query's vector and every chunk's, and BM25 keyword ranking (SQLite FTS5). A text
// query is embedded only when the space's vectors come from the server's embedder;
// otherwise (a space of client vectors) it ranks by keywords alone, unless the client
// sends the query's vector too.
//
// The steps: checkSearch validates the input, callerVector and embedQuery make the
// query's vector, rank runs and fuses the rankings, assemble loads the chunks found.
func (k *Knowledge) Search(ctx context.Context, p *auth.Principal, spaceID int64, in VectorSearchInput) ([]model.VectorResult, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	q, err := checkSearch(in)
	if err != nil {
		return nil, err
	}
	r := k.store.Read()
	sp, err := k.space(ctx, r, p, spaceID)
	if err != nil {
		return nil, err
	}
	qv, err := callerVector(sp, in.Vector)
	if err != nil {
		return nil, err
	}
	if sp.Chunks == 0 {
		return []model.VectorResult{}, nil
	}
	if qv == nil && q.mode != VectorModeKeyword {
		if qv, err = k.embedQuery(ctx, sp, q); err != nil {
			return nil, err
		}
	}
	hits, ix, err := k.rank(ctx, r, sp, q, qv)
	if err != nil {
		return nil, err
	}
	return assemble(ctx, r, sp, hits, ix, qv)
}

// searchQuery is a search's input once checkSearch has passed it.
type searchQuery struct {
	text string // trimmed; "" when the search has no text
	k    int
	mode string  // hybrid, vector or keyword
	docs []int64 // only chunks of these documents; nil for every document
}

// checkSearch checks what can be checked of a search before its space is loaded.
func checkSearch(in VectorSearchInput) (searchQuery, error) {
	q := searchQuery{k: DefaultVectorK, mode: in.Mode}
	if in.K != nil {
		q.k = *in.K
		if q.k < 1 || q.k > MaxVectorK {
			return q, errs.Invalid("k must be between 1 and %d", MaxVectorK)
		}
	}
	if in.Query != nil {
		q.text = strings.TrimSpace(*in.Query)
		if err := checkText("query", q.text, false, MaxVectorQueryLen); err != nil {
			return q, err
		}
	}
	if q.text == "" && in.Vector == nil {
		return q, errs.Invalid("give a query (text) or a vector to search with")
	}
	switch q.mode {
	case "":
		q.mode = VectorModeHybrid
	case VectorModeHybrid, VectorModeVector, VectorModeKeyword:
	default:
		return q, errs.Invalid("mode must be hybrid, vector or keyword, not %q", q.mode)
	}
	if q.mode == VectorModeKeyword && q.text == "" {
		return q, errs.Invalid("keyword search needs a query text")
	}
	if in.Filter != nil {
		if len(in.Filter.DocumentIDs) > MaxVectorFilterDocuments {
			return q, errs.Invalid("filter.documentIds may list at most %d documents", MaxVectorFilterDocuments)
		}
		q.docs = in.Filter.DocumentIDs
	}
	return q, nil
}

// callerVector checks the query vector a caller sent against the space and returns a
// normalized copy; nil when the caller sent none.
func callerVector(sp *model.VectorSpace, v []float32) ([]float32, error) {
	if v == nil {
		return nil, nil
	}
	if sp.Dimensions != 0 && len(v) != sp.Dimensions {
		return nil, errs.Invalid("vector has %s; space %d holds vectors of %s", errs.Count(len(v), "dimension"), sp.ID, errs.Count(sp.Dimensions, "dimension"))
	}
	qv := slices.Clone(v)
	if !vector.Normalize(qv) {
		return nil, errs.Invalid("vector is zero (or not finite): it has no direction to compare")
	}
	return qv, nil
}

// embedQuery embeds the query text when the space's vectors come from this server's
// embedder. Otherwise it returns nil (keyword ranking alone), or an error in vector
// mode, which would have nothing to rank by. An embedding that cannot be compared with
// the space's vectors is nil too.
func (k *Knowledge) embedQuery(ctx context.Context, sp *model.VectorSpace, q searchQuery) ([]float32, error) {
	if sp.Embedder != k.embedder.Name() {
		if q.mode == VectorModeVector {
			return nil, errs.Invalid("space %d holds vectors from %s, which this server cannot make for a query; send the query's vector", sp.ID, sp.Embedder)
		}
		return nil, nil
	}
	vs, err := k.embedder.Embed(ctx, []string{q.text})
	if err != nil || len(vs) != 1 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, internal("embed query", fmt.Errorf("the embedder failed: %v", err))
	}
	qv := vs[0]
	if len(qv) != sp.Dimensions || !vector.Normalize(qv) {
		return nil, nil
	}
	return qv, nil
}

// rank runs the rankings the search asks for (by similarity to qv, by keywords) and
// fuses them by reciprocal rank: the best q.k hits, best first. ix is the index the
// vector ranking used, nil when it did not run.
func (k *Knowledge) rank(ctx context.Context, r store.Reader, sp *model.VectorSpace, q searchQuery, qv []float32) (hits []vector.Hit, ix *vector.Index, err error) {
	depth := max(50, 4*q.k) // how deep each ranking goes before fusion
	var rankings [][]int64
	if qv != nil && q.mode != VectorModeKeyword {
		if ix, err = k.index(ctx, sp); err != nil {
			return nil, nil, err
		}
		found := ix.Search(qv, depth, q.allow())
		ranked := make([]int64, len(found))
		for i, h := range found {
			ranked[i] = h.ID
		}
		rankings = append(rankings, ranked)
	}
	if q.text != "" && q.mode != VectorModeVector {
		var ids []int64 // an empty filter matches nothing, without asking the store
		if q.docs == nil || len(q.docs) > 0 {
			if ids, err = r.VectorKeywordSearch(ctx, sp.ID, q.text, depth, q.docs); err != nil {
				return nil, nil, internal("keyword search", err)
			}
		}
		rankings = append(rankings, ids)
	}
	hits = vector.Fuse(rankings...)
	if len(hits) > q.k {
		hits = hits[:q.k]
	}
	return hits, ix, nil
}

// allow is the document filter of the vector ranking; nil lets every chunk through.
func (q searchQuery) allow() func(doc int64) bool {
	if q.docs == nil {
		return nil
	}
	set := make(map[int64]bool, len(q.docs))
	for _, id := range q.docs {
		set[id] = true
	}
	return func(doc int64) bool { return set[doc] }
}

// assemble loads the chunks of the hits and makes the results, in the hits' order,
// with each chunk's cosine similarity to qv when the vector ranking ran (ix).
func assemble(ctx context.Context, r store.Reader, sp *model.VectorSpace, hits []vector.Hit, ix *vector.Index, qv []float32) ([]model.VectorResult, error) {
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	chunks, err := r.VectorChunks(ctx, sp.ID, ids)
	if err != nil {
		return nil, internal("load chunks", err)
	}
	out := make([]model.VectorResult, 0, len(hits))
	for _, h := range hits {
		c, ok := chunks[h.ID]
		if !ok {
			continue // deleted since the ranking
		}
		out = append(out, model.VectorResult{DocumentID: c.DocumentID, DocumentName: c.DocumentName, ChunkID: c.ID, ChunkIndex: c.Seq,
			Chunk: c.Text, Score: float64(h.Score), Similarity: similarity(ix, qv, c.ID)})
	}
	return out, nil
}

// similarity is the cosine similarity of a chunk's vector to qv (both normalized); nil
// when the vector ranking did not run or the chunk has no vector in the index.
func similarity(ix *vector.Index, qv []float32, chunkID int64) *float64 {
	if ix == nil {
		return nil
	}
	i, ok := slices.BinarySearch(ix.IDs, chunkID) // the store gives chunks in id order
	if !ok {
		return nil
	}
	sim := float64(vector.Dot(qv, ix.Vecs[i*ix.Dims:(i+1)*ix.Dims]))
	return &sim
}
