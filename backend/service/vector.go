package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/vector"
)

// Vector knowledge bases. Who may use them:
//
//   - REST (/api/vector/...): data tokens only (AuthenticateDataToken); vector:read for
//     reading and search, vector:write for the rest. A platform token is refused there
//     with 403, and a data token is refused everywhere else (require).
//   - GraphQL and in-process callers: a principal holding the vector scope (a data
//     token, the local owner), or a platform principal holding admin (project
//     administration, like agents and tokens), so that the web UI's session can manage
//     and search its project's spaces.
//
// Every rule is here, below both interfaces.

// Embedder turns texts into vectors (see package vector for the built-in one).
type Embedder = vector.Embedder

// Bounds on knowledge-base input, also stated in the OpenAPI document.
const (
	MaxVectorSpaceNameLen    = 200
	MaxVectorDescriptionLen  = 2000
	MaxVectorQueryLen        = 10_000
	MaxVectorChunkLen        = 20_000
	MaxVectorDocumentChunks  = 50_000
	MaxVectorDimensions      = 4096
	DefaultVectorK           = 5
	MaxVectorK               = 100
	MaxVectorFilterDocuments = 1000
	// VectorEmbedderClient is the embedder of a space whose vectors come from its clients.
	VectorEmbedderClient = "client"
)

// Event types of knowledge bases (they reach callers holding admin).
const (
	EventVectorSpaceCreated    = "vector.space.created"
	EventVectorSpaceUpdated    = "vector.space.updated"
	EventVectorSpaceDeleted    = "vector.space.deleted"
	EventVectorDocumentCreated = "vector.document.created"
	EventVectorDocumentDeleted = "vector.document.deleted"
)

// maxCachedVectorBytes bounds the decoded vectors kept in memory over every space.
const maxCachedVectorBytes = 1 << 30

// vectorState is the service's knowledge-base state: the embedder and a cache of each
// space's decoded vectors, dropped whenever the space changes.
type vectorState struct {
	embedder Embedder

	mu    sync.Mutex
	gen   map[int64]uint64 // space -> generation, bumped on every change
	cache map[int64]*cachedIndex
	tick  uint64
	load  map[int64]*sync.Mutex // one loader per space
}

type cachedIndex struct {
	ix       *vector.Index
	gen      uint64
	lastUsed uint64
}

func newVectorState(e Embedder) *vectorState {
	if e == nil {
		e = vector.HashEmbedder{}
	}
	return &vectorState{embedder: e, gen: map[int64]uint64{}, cache: map[int64]*cachedIndex{}, load: map[int64]*sync.Mutex{}}
}

// vec returns the service's knowledge-base state.
func (s *Service) vec() *vectorState { return s.vector }

// Embedder is the embedder the service uses for text.
func (s *Service) Embedder() Embedder { return s.vec().embedder }

// invalidate forgets a space's cached vectors; call it after a change has committed.
func (v *vectorState) invalidate(spaceID int64) {
	v.mu.Lock()
	v.gen[spaceID]++
	delete(v.cache, spaceID)
	v.mu.Unlock()
}

// index returns the space's vectors, from the cache or loaded from the store.
func (s *Service) vectorIndex(ctx context.Context, sp *model.VectorSpace) (*vector.Index, error) {
	v := s.vec()
	v.mu.Lock()
	if c := v.cache[sp.ID]; c != nil {
		v.tick++
		c.lastUsed = v.tick
		v.mu.Unlock()
		return c.ix, nil
	}
	l := v.load[sp.ID]
	if l == nil {
		l = &sync.Mutex{}
		v.load[sp.ID] = l
	}
	v.mu.Unlock()

	l.Lock() // one load per space at a time; the others wait and then find it cached
	defer l.Unlock()
	v.mu.Lock()
	if c := v.cache[sp.ID]; c != nil {
		v.mu.Unlock()
		return c.ix, nil
	}
	gen := v.gen[sp.ID]
	v.mu.Unlock()

	ix := &vector.Index{Dims: sp.Dimensions, IDs: make([]int64, 0, sp.Chunks), Docs: make([]int64, 0, sp.Chunks),
		Vecs: make([]float32, 0, int(sp.Chunks)*sp.Dimensions)}
	err := s.store.Read().EachVectorChunk(ctx, sp.ID, func(id, doc int64, raw []byte) error {
		if len(raw) != 4*ix.Dims {
			return nil // written before the space's dimensions were fixed; cannot be compared
		}
		var err error
		ix.IDs = append(ix.IDs, id)
		ix.Docs = append(ix.Docs, doc)
		ix.Vecs, err = vector.DecodeInto(ix.Vecs, raw)
		return err
	})
	if err != nil {
		return nil, internal("load vectors", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.gen[sp.ID] == gen { // nothing changed while loading
		v.tick++
		v.cache[sp.ID] = &cachedIndex{ix: ix, gen: gen, lastUsed: v.tick}
		v.evictLocked()
	}
	return ix, nil
}

// evictLocked drops the least recently used indexes until the cache fits its bound.
func (v *vectorState) evictLocked() {
	for {
		var total int64
		var oldest int64 = -1
		var oldestUse uint64 = math.MaxUint64
		for id, c := range v.cache {
			total += c.ix.Bytes()
			if c.lastUsed < oldestUse {
				oldest, oldestUse = id, c.lastUsed
			}
		}
		if total <= maxCachedVectorBytes || len(v.cache) <= 1 {
			return
		}
		delete(v.cache, oldest)
	}
}

// requireVector checks that p may use the knowledge bases with scope (vector:read or
// vector:write): see the rules at the top of this file.
func requireVector(p *auth.Principal, scope string) error {
	if p == nil {
		return errs.Unauth("authentication required")
	}
	if p.Has(scope) {
		return nil
	}
	if p.TokenType == model.TokenData {
		return errs.Forbid("this request needs the %s scope, which this data token does not hold", scope)
	}
	if p.Kind != auth.KindAgent && p.Has(auth.Admin) {
		return nil
	}
	return errs.Forbid("knowledge bases need a data token with the %s scope (or, outside /api/vector, the admin scope)", scope)
}

// AuthenticateDataToken resolves the Bearer token of a /api/vector request: only data
// tokens are accepted there; a valid platform token gets 403 saying so.
func (s *Service) AuthenticateDataToken(ctx context.Context, value string) (*auth.Principal, error) {
	p, err := s.AuthenticateToken(ctx, value)
	if err != nil {
		return nil, err
	}
	if p.TokenType != model.TokenData {
		return nil, errs.Forbid("the /api/vector endpoints accept data tokens only, and this is a %s token; create one with: agentdesk token create --type data --scopes vector:read,vector:write", p.TokenType)
	}
	return p, nil
}

// CreateVectorSpaceInput is a new space.
type CreateVectorSpaceInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// CreateVectorSpace makes a space in the caller's project.
func (s *Service) CreateVectorSpace(ctx context.Context, p *auth.Principal, in CreateVectorSpaceInput) (*model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, errs.Invalid("name is required")
	}
	name := strings.TrimSpace(*in.Name)
	if err := checkText("name", name, true, MaxVectorSpaceNameLen); err != nil {
		return nil, err
	}
	var desc string
	if in.Description != nil {
		desc = strings.TrimSpace(*in.Description)
		if err := checkText("description", desc, false, MaxVectorDescriptionLen); err != nil {
			return nil, err
		}
	}
	sp := &model.VectorSpace{ProjectID: p.ProjectID, Name: name, Description: desc, AgentIDs: []int64{}, CreatedAt: s.clock()}
	err := s.store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.InsertVectorSpace(ctx, sp); errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("a space named %q already exists in this project", name)
		} else if err != nil {
			return internal("create space", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorSpaceCreated, sp, sp.CreatedAt)
	})
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// VectorSpaces lists the caller's project's spaces, oldest first.
func (s *Service) VectorSpaces(ctx context.Context, p *auth.Principal) ([]model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	sps, err := s.store.Read().VectorSpaces(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list spaces", err)
	}
	return sps, nil
}

// VectorSpace loads a space of the caller's project.
func (s *Service) VectorSpace(ctx context.Context, p *auth.Principal, id int64) (*model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	return s.vectorSpace(ctx, s.store.Read(), p, id)
}

func (s *Service) vectorSpace(ctx context.Context, r store.Reader, p *auth.Principal, id int64) (*model.VectorSpace, error) {
	sp, err := r.VectorSpace(ctx, p.ProjectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("space %d not found", id)
	}
	if err != nil {
		return nil, internal("load space", err)
	}
	return sp, nil
}

// DeleteVectorSpace deletes a space with its documents.
func (s *Service) DeleteVectorSpace(ctx context.Context, p *auth.Principal, id int64) error {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return err
	}
	err := s.store.Write(ctx, func(tx *store.Tx) error {
		err := tx.DeleteVectorSpace(ctx, p.ProjectID, id)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("space %d not found", id)
		}
		if err != nil {
			return internal("delete space", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorSpaceDeleted, map[string]int64{"id": id}, s.clock())
	})
	s.vec().invalidate(id)
	return err
}

// VectorChunkInput is a chunk a client cut itself, with its vector or without (then
// the server's embedder makes it).
type VectorChunkInput struct {
	Text   *string   `json:"text"`
	Vector []float32 `json:"vector"`
}

// AddVectorDocumentInput is a new document: text (JSON upload), ready-made chunks
// (JSON, optionally with vectors), or a file (multipart) whose format is told by its
// name, its content type or its bytes.
type AddVectorDocumentInput struct {
	Name   *string            `json:"name"`
	Text   *string            `json:"text"`
	Chunks []VectorChunkInput `json:"chunks"`

	File     io.Reader `json:"-"` // multipart upload, read up to MaxDocumentSize bytes
	FileType string    `json:"-"` // its declared content type
}

// AddVectorDocument extracts, chunks and embeds a document and stores it in the space.
// Embedding runs before the write, so that a slow embedder never holds the writer.
func (s *Service) AddVectorDocument(ctx context.Context, p *auth.Principal, spaceID int64, in AddVectorDocumentInput) (*model.VectorDocument, error) {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return nil, err
	}
	sp, err := s.vectorSpace(ctx, s.store.Read(), p, spaceID)
	if err != nil {
		return nil, err
	}
	name := ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	texts, vecs, mimeType, size, err := s.documentChunks(in, &name)
	if err != nil {
		return nil, err
	}
	embedder := VectorEmbedderClient
	if vecs == nil {
		e := s.vec().embedder
		embedder = e.Name()
		if sp.Embedder != "" && sp.Embedder != embedder {
			return nil, errs.Invalid("space %d holds vectors from %s, and this server embeds with %s; send the chunks with their vectors, or use another space", sp.ID, sp.Embedder, embedder)
		}
		vecs, err = e.Embed(ctx, texts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			slog.Error("embed document", "embedder", embedder, "err", err)
			return nil, internal("embed", fmt.Errorf("the embedder failed: %w", err))
		}
		if len(vecs) != len(texts) {
			return nil, internal("embed", fmt.Errorf("the embedder returned %d vectors for %d chunks", len(vecs), len(texts)))
		}
	} else if sp.Embedder != "" && sp.Embedder != VectorEmbedderClient {
		return nil, errs.Invalid("space %d holds vectors made by the server's embedder (%s); upload text without vectors, or use another space for your own vectors", sp.ID, sp.Embedder)
	}
	dims := len(vecs[0])
	if sp.Dimensions != 0 && dims != sp.Dimensions {
		return nil, errs.Invalid("the vectors have %d dimensions; space %d holds vectors of %d dimensions", dims, sp.ID, sp.Dimensions)
	}
	rows := make([]store.VectorChunkInput, len(texts))
	for i, t := range texts {
		if len(vecs[i]) != dims {
			return nil, errs.Invalid("chunk %d has a vector of %d dimensions, chunk 0 one of %d: every vector of a space has the same length", i, len(vecs[i]), dims)
		}
		v := slices.Clone(vecs[i])
		if !vector.Normalize(v) {
			return nil, errs.Invalid("chunk %d has a zero (or not finite) vector, which has no direction to compare", i)
		}
		rows[i] = store.VectorChunkInput{Text: t, Vector: vector.Encode(v)}
	}
	doc := &model.VectorDocument{SpaceID: sp.ID, Name: name, MimeType: mimeType, Size: size, CreatedAt: s.clock()}
	err = s.store.Write(ctx, func(tx *store.Tx) error {
		cur, err := s.vectorSpace(ctx, tx.Reader, p, spaceID) // it may have changed since
		if err != nil {
			return err
		}
		switch {
		case cur.Embedder == "":
			if err := tx.SetVectorSpaceEmbedder(ctx, cur.ID, embedder, dims); err != nil {
				return internal("set embedder", err)
			}
		case cur.Embedder != embedder || cur.Dimensions != dims:
			return errs.Conflicting("space %d now holds vectors from %s (%d dimensions); this document's are from %s (%d): upload it again", cur.ID, cur.Embedder, cur.Dimensions, embedder, dims)
		}
		if err := tx.InsertVectorDocument(ctx, doc, rows); err != nil {
			return internal("store document", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorDocumentCreated, doc, doc.CreatedAt)
	})
	s.vec().invalidate(sp.ID)
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// documentChunks turns an upload into chunk texts, and vectors when the client sent
// them. It names the document when the client did not.
func (s *Service) documentChunks(in AddVectorDocumentInput, name *string) (texts []string, vecs [][]float32, mimeType string, size int64, err error) {
	given := 0
	for _, b := range []bool{in.Text != nil, in.Chunks != nil, in.File != nil} {
		if b {
			given++
		}
	}
	if given != 1 {
		return nil, nil, "", 0, errs.Invalid("give the document as text, as chunks, or as a multipart file, exactly one of them")
	}
	var text string
	switch {
	case in.File != nil:
		data, err := io.ReadAll(io.LimitReader(in.File, MaxDocumentSize+1))
		if err != nil {
			return nil, nil, "", 0, err // the reader says what (too large, malformed upload)
		}
		if len(data) > MaxDocumentSize {
			return nil, nil, "", 0, errs.TooLarge("the document is over the limit of %d bytes (25 MiB)", MaxDocumentSize)
		}
		*name = SanitizeDocumentName(*name)
		f, err := vector.DetectFormat(*name, in.FileType, data)
		if err != nil {
			return nil, nil, "", 0, errs.Invalid("%s", strings.TrimPrefix(err.Error(), vector.ErrUnreadable.Error()+": "))
		}
		text, err = vector.ExtractText(f, data)
		if err != nil {
			return nil, nil, "", 0, errs.Invalid("%s: %s", *name, strings.TrimPrefix(err.Error(), vector.ErrUnreadable.Error()+": "))
		}
		mimeType = string(f)
	case in.Text != nil:
		if err := checkText("name", *name, true, MaxDocumentNameLen); err != nil {
			return nil, nil, "", 0, err
		}
		if strings.TrimSpace(*in.Text) == "" {
			return nil, nil, "", 0, errs.Invalid("text is required and must not be empty")
		}
		if !utf8.ValidString(*in.Text) {
			return nil, nil, "", 0, errs.Invalid("text must be valid UTF-8")
		}
		if len(*in.Text) > MaxDocumentSize {
			return nil, nil, "", 0, errs.TooLarge("the text is over the limit of %d bytes (25 MiB)", MaxDocumentSize)
		}
		text, mimeType = *in.Text, string(vector.FormatMarkdown)
	default:
		if err := checkText("name", *name, true, MaxDocumentNameLen); err != nil {
			return nil, nil, "", 0, err
		}
		return clientChunks(in.Chunks)
	}
	texts = vector.Chunk(text)
	if len(texts) == 0 {
		return nil, nil, "", 0, errs.Invalid("the document has no text")
	}
	if len(texts) > MaxVectorDocumentChunks {
		return nil, nil, "", 0, errs.Invalid("the document makes %d chunks, at most %d are allowed; split it", len(texts), MaxVectorDocumentChunks)
	}
	return texts, nil, mimeType, int64(len(text)), nil
}

// clientChunks checks chunks a client cut: all with vectors of one length, or none.
func clientChunks(chunks []VectorChunkInput) (texts []string, vecs [][]float32, mimeType string, size int64, err error) {
	if len(chunks) == 0 {
		return nil, nil, "", 0, errs.Invalid("chunks must hold at least one chunk")
	}
	if len(chunks) > MaxVectorDocumentChunks {
		return nil, nil, "", 0, errs.Invalid("a document may have at most %d chunks, not %d", MaxVectorDocumentChunks, len(chunks))
	}
	withVectors := chunks[0].Vector != nil
	for i, c := range chunks {
		if c.Text == nil {
			return nil, nil, "", 0, errs.Invalid("chunks[%d].text is required", i)
		}
		if err := checkText(fmt.Sprintf("chunks[%d].text", i), *c.Text, true, MaxVectorChunkLen); err != nil {
			return nil, nil, "", 0, err
		}
		if (c.Vector != nil) != withVectors {
			return nil, nil, "", 0, errs.Invalid("chunks[%d] %s a vector and chunks[0] %s: send vectors with every chunk or with none", i, hasWord(c.Vector != nil), hasWord(withVectors))
		}
		if withVectors {
			if n := len(c.Vector); n == 0 || n > MaxVectorDimensions {
				return nil, nil, "", 0, errs.Invalid("chunks[%d].vector has %d dimensions; between 1 and %d are allowed", i, n, MaxVectorDimensions)
			}
			if len(c.Vector) != len(chunks[0].Vector) {
				return nil, nil, "", 0, errs.Invalid("chunks[%d].vector has %d dimensions and chunks[0].vector %d: every vector must have the same length", i, len(c.Vector), len(chunks[0].Vector))
			}
			vecs = append(vecs, c.Vector)
		}
		texts = append(texts, *c.Text)
		size += int64(len(*c.Text))
	}
	return texts, vecs, "text/plain", size, nil
}

func hasWord(b bool) string {
	if b {
		return "has"
	}
	return "has no"
}

// VectorDocuments lists a space's documents, oldest first.
func (s *Service) VectorDocuments(ctx context.Context, p *auth.Principal, spaceID int64) ([]model.VectorDocument, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	r := s.store.Read()
	if _, err := s.vectorSpace(ctx, r, p, spaceID); err != nil {
		return nil, err
	}
	docs, err := r.VectorDocuments(ctx, spaceID)
	if err != nil {
		return nil, internal("list documents", err)
	}
	return docs, nil
}

// DeleteVectorDocument deletes a document of a space with its chunks.
func (s *Service) DeleteVectorDocument(ctx context.Context, p *auth.Principal, spaceID, docID int64) error {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return err
	}
	err := s.store.Write(ctx, func(tx *store.Tx) error {
		if _, err := s.vectorSpace(ctx, tx.Reader, p, spaceID); err != nil {
			return err
		}
		err := tx.DeleteVectorDocument(ctx, spaceID, docID)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("document %d not found in space %d", docID, spaceID)
		}
		if err != nil {
			return internal("delete document", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorDocumentDeleted, map[string]int64{"id": docID, "spaceId": spaceID}, s.clock())
	})
	s.vec().invalidate(spaceID)
	return err
}

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

// SearchVectors finds the k chunks of a space that best answer the query, best first.
// Two rankings are fused by reciprocal rank (k=60): exact cosine similarity between
// the query's vector and every chunk's, and BM25 keyword ranking (SQLite FTS5). A text
// query is embedded only when the space's vectors come from the server's embedder;
// otherwise (a space of client vectors) it ranks by keywords alone, unless the client
// sends the query's vector too.
func (s *Service) SearchVectors(ctx context.Context, p *auth.Principal, spaceID int64, in VectorSearchInput) ([]model.VectorResult, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	k := DefaultVectorK
	if in.K != nil {
		k = *in.K
		if k < 1 || k > MaxVectorK {
			return nil, errs.Invalid("k must be between 1 and %d", MaxVectorK)
		}
	}
	query := ""
	if in.Query != nil {
		query = strings.TrimSpace(*in.Query)
		if err := checkText("query", query, false, MaxVectorQueryLen); err != nil {
			return nil, err
		}
	}
	if query == "" && in.Vector == nil {
		return nil, errs.Invalid("give a query (text) or a vector to search with")
	}
	mode := in.Mode
	switch mode {
	case "":
		mode = VectorModeHybrid
	case VectorModeHybrid, VectorModeVector, VectorModeKeyword:
	default:
		return nil, errs.Invalid("mode must be hybrid, vector or keyword, not %q", mode)
	}
	if mode == VectorModeKeyword && query == "" {
		return nil, errs.Invalid("keyword search needs a query text")
	}
	var docFilter []int64
	if in.Filter != nil {
		if len(in.Filter.DocumentIDs) > MaxVectorFilterDocuments {
			return nil, errs.Invalid("filter.documentIds may list at most %d documents", MaxVectorFilterDocuments)
		}
		docFilter = in.Filter.DocumentIDs
	}
	r := s.store.Read()
	sp, err := s.vectorSpace(ctx, r, p, spaceID)
	if err != nil {
		return nil, err
	}
	var qv []float32
	if in.Vector != nil {
		if sp.Dimensions != 0 && len(in.Vector) != sp.Dimensions {
			return nil, errs.Invalid("vector has %d dimensions; space %d holds vectors of %d dimensions", len(in.Vector), sp.ID, sp.Dimensions)
		}
		qv = slices.Clone(in.Vector)
		if !vector.Normalize(qv) {
			return nil, errs.Invalid("vector is zero (or not finite): it has no direction to compare")
		}
	}
	if sp.Chunks == 0 {
		return []model.VectorResult{}, nil
	}
	if qv == nil && mode != VectorModeKeyword {
		e := s.vec().embedder
		if sp.Embedder == e.Name() {
			vs, err := e.Embed(ctx, []string{query})
			if err != nil || len(vs) != 1 {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, internal("embed query", fmt.Errorf("the embedder failed: %v", err))
			}
			qv = vs[0]
			if len(qv) != sp.Dimensions || !vector.Normalize(qv) {
				qv = nil
			}
		} else if mode == VectorModeVector {
			return nil, errs.Invalid("space %d holds vectors from %s, which this server cannot make for a query; send the query's vector", sp.ID, sp.Embedder)
		}
	}
	depth := max(50, 4*k) // how deep each ranking goes before fusion
	var allow func(int64) bool
	if docFilter != nil {
		set := make(map[int64]bool, len(docFilter))
		for _, id := range docFilter {
			set[id] = true
		}
		allow = func(d int64) bool { return set[d] }
	}
	var rankings [][]int64
	var ix *vector.Index
	if qv != nil && mode != VectorModeKeyword {
		if ix, err = s.vectorIndex(ctx, sp); err != nil {
			return nil, err
		}
		hits := ix.Search(qv, depth, allow)
		ranked := make([]int64, len(hits))
		for i, h := range hits {
			ranked[i] = h.ID
		}
		rankings = append(rankings, ranked)
	}
	if query != "" && mode != VectorModeVector {
		if docFilter != nil && len(docFilter) == 0 {
			rankings = append(rankings, nil)
		} else {
			ids, err := r.VectorKeywordSearch(ctx, sp.ID, query, depth, docFilter)
			if err != nil {
				return nil, internal("keyword search", err)
			}
			rankings = append(rankings, ids)
		}
	}
	fused := vector.Fuse(rankings...)
	if len(fused) > k {
		fused = fused[:k]
	}
	ids := make([]int64, len(fused))
	for i, h := range fused {
		ids[i] = h.ID
	}
	chunks, err := r.VectorChunks(ctx, sp.ID, ids)
	if err != nil {
		return nil, internal("load chunks", err)
	}
	out := make([]model.VectorResult, 0, len(fused))
	for _, h := range fused {
		c, ok := chunks[h.ID]
		if !ok {
			continue // deleted since the ranking
		}
		res := model.VectorResult{DocumentID: c.DocumentID, DocumentName: c.DocumentName, ChunkID: c.ID, ChunkIndex: c.Seq,
			Chunk: c.Text, Score: float64(h.Score)}
		if ix != nil {
			if i := sort.Search(len(ix.IDs), func(i int) bool { return ix.IDs[i] >= c.ID }); i < len(ix.IDs) && ix.IDs[i] == c.ID {
				sim := float64(vector.Dot(qv, ix.Vecs[i*ix.Dims:(i+1)*ix.Dims]))
				res.Similarity = &sim
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// LinkVectorSpace links a space to an agent of the same project, so that the agent's
// environment names it (AGENTDESK_VECTOR_SPACES). Linking twice changes nothing.
func (s *Service) LinkVectorSpace(ctx context.Context, p *auth.Principal, spaceID, agentID int64) (*model.VectorSpace, error) {
	return s.setVectorLink(ctx, p, spaceID, agentID, true)
}

// UnlinkVectorSpace removes a space's link to an agent; a missing link is not an error.
func (s *Service) UnlinkVectorSpace(ctx context.Context, p *auth.Principal, spaceID, agentID int64) (*model.VectorSpace, error) {
	return s.setVectorLink(ctx, p, spaceID, agentID, false)
}

func (s *Service) setVectorLink(ctx context.Context, p *auth.Principal, spaceID, agentID int64, link bool) (*model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return nil, err
	}
	var sp *model.VectorSpace
	err := s.store.Write(ctx, func(tx *store.Tx) error {
		if _, err := s.vectorSpace(ctx, tx.Reader, p, spaceID); err != nil {
			return err
		}
		if _, err := tx.Agent(ctx, p.ProjectID, agentID); errors.Is(err, store.ErrNotFound) {
			return errs.Missing("agent %d not found", agentID)
		} else if err != nil {
			return internal("load agent", err)
		}
		var err error
		if link {
			err = tx.LinkVectorSpaceAgent(ctx, spaceID, agentID, s.clock())
		} else {
			err = tx.UnlinkVectorSpaceAgent(ctx, spaceID, agentID)
		}
		if err != nil {
			return internal("link space", err)
		}
		if sp, err = s.vectorSpace(ctx, tx.Reader, p, spaceID); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorSpaceUpdated, sp, s.clock())
	})
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// agentVectorSpaces is the AGENTDESK_VECTOR_SPACES value of an agent: its linked spaces'
// ids, comma-separated ("" when none).
func (s *Service) agentVectorSpaces(ctx context.Context, r store.Reader, agentID int64) (string, error) {
	ids, err := r.AgentVectorSpaces(ctx, agentID)
	if err != nil {
		return "", internal("load linked spaces", err)
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ","), nil
}
