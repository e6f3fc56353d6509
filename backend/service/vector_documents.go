package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/vector"
)

// The documents of knowledge bases: upload, chunking, embedding, listing, deletion.

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

// AddDocument extracts, chunks and embeds a document and stores it in the space.
// Embedding runs before the write, so that a slow embedder never holds the writer.
func (k *Knowledge) AddDocument(ctx context.Context, p *auth.Principal, spaceID int64, in AddVectorDocumentInput) (*model.VectorDocument, error) {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return nil, err
	}
	sp, err := k.space(ctx, k.store.Read(), p, spaceID)
	if err != nil {
		return nil, err
	}
	name := ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	texts, vecs, mimeType, size, err := documentChunks(in, &name)
	if err != nil {
		return nil, err
	}
	embedder := VectorEmbedderClient
	if vecs == nil {
		e := k.embedder
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
			return nil, internal("embed", fmt.Errorf("the embedder returned %s for %s", errs.Count(len(vecs), "vector"), errs.Count(len(texts), "chunk")))
		}
	} else if sp.Embedder != "" && sp.Embedder != VectorEmbedderClient {
		return nil, errs.Invalid("space %d holds vectors made by the server's embedder (%s); upload text without vectors, or use another space for your own vectors", sp.ID, sp.Embedder)
	}
	dims := len(vecs[0])
	if sp.Dimensions != 0 && dims != sp.Dimensions {
		return nil, errs.Invalid("the vectors have %s; space %d holds vectors of %s", errs.Count(dims, "dimension"), sp.ID, errs.Count(sp.Dimensions, "dimension"))
	}
	rows := make([]store.VectorChunkInput, len(texts))
	for i, t := range texts {
		if len(vecs[i]) != dims {
			return nil, errs.Invalid("chunk %d has a vector of %s, chunk 0 one of %d: every vector of a space has the same length", i, errs.Count(len(vecs[i]), "dimension"), dims)
		}
		v := slices.Clone(vecs[i])
		if !vector.Normalize(v) {
			return nil, errs.Invalid("chunk %d has a zero (or not finite) vector, which has no direction to compare", i)
		}
		rows[i] = store.VectorChunkInput{Text: t, Vector: vector.Encode(v)}
	}
	doc := &model.VectorDocument{SpaceID: sp.ID, Name: name, MimeType: mimeType, Size: size, CreatedAt: k.clock()}
	err = k.store.Write(ctx, k.author(p), func(tx *store.Tx) error {
		cur, err := k.space(ctx, tx.Reader, p, spaceID) // it may have changed since
		if err != nil {
			return err
		}
		switch {
		case cur.Embedder == "":
			if err := tx.SetVectorSpaceEmbedder(ctx, cur.ID, embedder, dims); err != nil {
				return internal("set embedder", err)
			}
		case cur.Embedder != embedder || cur.Dimensions != dims:
			return errs.Conflicting("space %d now holds vectors from %s (%s); this document's are from %s (%d): upload it again", cur.ID, cur.Embedder, errs.Count(cur.Dimensions, "dimension"), embedder, dims)
		}
		if err := tx.InsertVectorDocument(ctx, doc, rows); err != nil {
			return internal("store document", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorDocumentCreated, doc, doc.CreatedAt)
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// documentChunks turns an upload into chunk texts, and vectors when the client sent
// them. It names the document when the client did not.
func documentChunks(in AddVectorDocumentInput, name *string) (texts []string, vecs [][]float32, mimeType string, size int64, err error) {
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

// Documents lists a space's documents, oldest first.
func (k *Knowledge) Documents(ctx context.Context, p *auth.Principal, spaceID int64) ([]model.VectorDocument, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	r := k.store.Read()
	if _, err := k.space(ctx, r, p, spaceID); err != nil {
		return nil, err
	}
	docs, err := r.VectorDocuments(ctx, spaceID)
	if err != nil {
		return nil, internal("list documents", err)
	}
	return docs, nil
}

// DeleteDocument deletes a document of a space with its chunks.
func (k *Knowledge) DeleteDocument(ctx context.Context, p *auth.Principal, spaceID, docID int64) error {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return err
	}
	err := k.store.Write(ctx, k.author(p), func(tx *store.Tx) error {
		if _, err := k.space(ctx, tx.Reader, p, spaceID); err != nil {
			return err
		}
		err := tx.DeleteVectorDocument(ctx, spaceID, docID)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("document %d not found in space %d", docID, spaceID)
		}
		if err != nil {
			return internal("delete document", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorDocumentDeleted, map[string]int64{"id": docID, "spaceId": spaceID}, k.clock())
	})
	return err
}
