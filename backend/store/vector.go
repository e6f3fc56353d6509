package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Vector knowledge bases: spaces, documents, chunks (text, vector and an FTS5 index
// over the text), and links between spaces and agents. FTS5 and its query syntax stay in
// this file.

// InsertVectorSpace stores a new space and sets its id; a taken name is ErrDuplicate.
func (t *Tx) InsertVectorSpace(ctx context.Context, sp *model.VectorSpace) error {
	var exists int
	err := t.queryRow(ctx, `SELECT 1 FROM vector_spaces WHERE project_id = $1 AND name = $2`, sp.ProjectID, sp.Name).Scan(&exists)
	if err == nil {
		return ErrDuplicate
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	res, err := t.insert(ctx, `INSERT INTO vector_spaces (project_id, name, description, embedder, dimensions, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		sp.ProjectID, sp.Name, sp.Description, sp.Embedder, sp.Dimensions, fmtTime(sp.CreatedAt))
	if err != nil {
		return err
	}
	sp.ID, err = res.LastInsertId()
	return err
}

func scanVectorSpace(row interface{ Scan(...any) error }) (*model.VectorSpace, error) {
	var sp model.VectorSpace
	var created, agents string
	err := row.Scan(&sp.ID, &sp.ProjectID, &sp.Name, &sp.Description, &sp.Embedder, &sp.Dimensions, &sp.Documents, &sp.Chunks, &created, &sp.Version, &agents)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	sp.CreatedAt = parseTime(created)
	sp.AgentIDs = []int64{}
	if err := json.Unmarshal([]byte(agents), &sp.AgentIDs); err != nil {
		return nil, err
	}
	return &sp, nil
}

// VectorSpaces lists a project's spaces, oldest first.
func (r Reader) VectorSpaces(ctx context.Context, projectID string) ([]model.VectorSpace, error) {
	return queryList(ctx, r, scanVectorSpace, `SELECT `+r.sql.vectorSpaceColumns+` FROM vector_spaces WHERE project_id = $1 ORDER BY id`, projectID)
}

// VectorSpace loads a space of the project (ErrNotFound for another project's).
func (r Reader) VectorSpace(ctx context.Context, projectID string, id int64) (*model.VectorSpace, error) {
	return scanVectorSpace(r.queryRow(ctx, `SELECT `+r.sql.vectorSpaceColumns+` FROM vector_spaces WHERE id = $1 AND project_id = $2`, id, projectID))
}

// DeleteVectorSpace deletes a space with its documents, chunks and agent links.
func (t *Tx) DeleteVectorSpace(ctx context.Context, projectID string, id int64) error {
	// The chunks go first, in one statement, so that the FTS trigger runs per chunk
	// without the cascade's per-document bookkeeping.
	if _, err := t.exec(ctx, `DELETE FROM vector_chunks WHERE space_id = (SELECT id FROM vector_spaces WHERE id = $1 AND project_id = $2)`, id, projectID); err != nil {
		return err
	}
	return t.execOne(ctx, `DELETE FROM vector_spaces WHERE id = $1 AND project_id = $2`, id, projectID)
}

// Every statement that changes what a search of a space finds (its chunks, its
// embedder or dimensions) raises the space's version in the same transaction: the
// service's cache of decoded vectors is good only for the version it was loaded at.

// SetVectorSpaceEmbedder records where a space's vectors come from, on its first document.
func (t *Tx) SetVectorSpaceEmbedder(ctx context.Context, id int64, embedder string, dims int) error {
	_, err := t.exec(ctx, `UPDATE vector_spaces SET embedder = $1, dimensions = $2, version = version + 1 WHERE id = $3`, embedder, dims, id)
	return err
}

// VectorChunkInput is a chunk to store: its text and its encoded vector.
type VectorChunkInput struct {
	Text   string
	Vector []byte
}

// InsertVectorDocument stores a document with its chunks (indexed for keyword search
// by a trigger), sets its id and updates the space's counts.
func (t *Tx) InsertVectorDocument(ctx context.Context, d *model.VectorDocument, chunks []VectorChunkInput) error {
	res, err := t.insert(ctx, `INSERT INTO vector_documents (space_id, name, mime_type, size, chunks, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		d.SpaceID, d.Name, d.MimeType, d.Size, len(chunks), fmtTime(d.CreatedAt))
	if err != nil {
		return err
	}
	if d.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	d.Chunks = len(chunks)
	for i, c := range chunks {
		if _, err := t.exec(ctx, `INSERT INTO vector_chunks (space_id, document_id, seq, text, vector) VALUES ($1, $2, $3, $4, $5)`,
			d.SpaceID, d.ID, i, c.Text, c.Vector); err != nil {
			return err
		}
	}
	_, err = t.exec(ctx, `UPDATE vector_spaces SET document_count = document_count + 1, chunk_count = chunk_count + $1, version = version + 1 WHERE id = $2`, len(chunks), d.SpaceID)
	return err
}

const vectorDocumentColumns = `id, space_id, name, mime_type, size, chunks, created_at`

func scanVectorDocument(row interface{ Scan(...any) error }) (*model.VectorDocument, error) {
	var d model.VectorDocument
	var created string
	err := row.Scan(&d.ID, &d.SpaceID, &d.Name, &d.MimeType, &d.Size, &d.Chunks, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	d.CreatedAt = parseTime(created)
	return &d, nil
}

// VectorDocuments lists a space's documents, oldest first.
func (r Reader) VectorDocuments(ctx context.Context, spaceID int64) ([]model.VectorDocument, error) {
	return queryList(ctx, r, scanVectorDocument, `SELECT `+vectorDocumentColumns+` FROM vector_documents WHERE space_id = $1 ORDER BY id`, spaceID)
}

// DeleteVectorDocument deletes a document of the space with its chunks.
func (t *Tx) DeleteVectorDocument(ctx context.Context, spaceID, id int64) error {
	var chunks int64
	err := t.queryRow(ctx, `SELECT chunks FROM vector_documents WHERE id = $1 AND space_id = $2`, id, spaceID).Scan(&chunks)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM vector_chunks WHERE document_id = $1`, id); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM vector_documents WHERE id = $1`, id); err != nil {
		return err
	}
	_, err = t.exec(ctx, `UPDATE vector_spaces SET document_count = document_count - 1, chunk_count = chunk_count - $1, version = version + 1 WHERE id = $2`, chunks, spaceID)
	return err
}

// EachVectorChunk calls fn with every chunk of the space (id, document, encoded vector),
// in id order, to build the in-memory index. The blob is only valid during the call.
func (r Reader) EachVectorChunk(ctx context.Context, spaceID int64, fn func(id, docID int64, vector []byte) error) error {
	rows, err := r.query(ctx, `SELECT id, document_id, vector FROM vector_chunks WHERE space_id = $1 ORDER BY id`, spaceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var id, doc int64
	var raw sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &doc, &raw); err != nil {
			return err
		}
		if err := fn(id, doc, raw); err != nil {
			return err
		}
	}
	return rows.Err()
}

// VectorChunks loads chunks by id, with their document's name.
func (r Reader) VectorChunks(ctx context.Context, spaceID int64, ids []int64) (map[int64]model.VectorChunk, error) {
	out := make(map[int64]model.VectorChunk, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	list, _ := json.Marshal(ids)
	rows, err := r.query(ctx, r.sql.vectorChunksByID, spaceID, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c model.VectorChunk
		if err := rows.Scan(&c.ID, &c.DocumentID, &c.DocumentName, &c.Seq, &c.Text); err != nil {
			return nil, err
		}
		out[c.ID] = c
	}
	return out, rows.Err()
}

// maxKeywordTerms bounds the words of a keyword query.
const maxKeywordTerms = 32

// VectorKeywordSearch ranks the space's chunks against the words of query by BM25
// (FTS5, Porter stemming), best first, at most limit chunk ids; documents, if not empty,
// keeps only their chunks. Any word may match (OR); a query without words finds nothing.
func (r Reader) VectorKeywordSearch(ctx context.Context, spaceID int64, query string, limit int, documents []int64) ([]int64, error) {
	words := strings.FieldsFunc(strings.ToLower(query), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
	if len(words) == 0 || limit <= 0 {
		return nil, nil
	}
	return r.sql.vectorKeywordSearch(ctx, r, spaceID, words, limit, documents)
}

// vectorKeywordSearchPostgres is VectorKeywordSearch on PostgreSQL: the chunks that
// hold any word, found through the GIN index vector_chunks_search (agentdesk_english:
// Snowball stemming, accents ignored), ranked by BM25 as FTS5 ranks them (k1 1.2,
// b 0.75), from the words' positions in each chunk's tsvector: PostgreSQL's own
// ts_rank_cd weighs every word alike, rare or common, and ranked worse here. The
// document frequencies are counted among the candidates, which hold
// every chunk with any of the words; a chunk's length relative to the space's mean is
// measured in characters rather than words (close enough, and no tsvector of every
// chunk of the space per search).
func vectorKeywordSearchPostgres(ctx context.Context, r Reader, spaceID int64, words []string, limit int, documents []int64) ([]int64, error) {
	var terms []string
	for _, w := range words { // letters and digits only: nothing to quote
		if !slices.Contains(terms, w) && len(terms) < maxKeywordTerms {
			terms = append(terms, w)
		}
	}
	inDocuments := ""
	args := []any{spaceID, terms, strings.Join(terms, " | "), limit}
	if len(documents) > 0 {
		list, _ := json.Marshal(documents)
		inDocuments = ` AND c.document_id IN (SELECT value::bigint FROM jsonb_array_elements_text($5))`
		args = append(args, string(list))
	}
	q := `WITH candidates AS MATERIALIZED (
			SELECT c.id, char_length(c.text) AS len,
				to_tsvector('agentdesk_english', regexp_replace(c.text COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g')) AS v
			FROM vector_chunks c
			WHERE c.space_id = $1 AND to_tsvector('agentdesk_english', regexp_replace(c.text COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g')) @@ to_tsquery('agentdesk_english', $3)` + inDocuments + `
		), words AS (
			SELECT DISTINCT w.lexeme FROM unnest($2::text[]) AS t, unnest(to_tsvector('agentdesk_english', t)) AS w
		), postings AS (
			SELECT c.id, c.len, w.lexeme, cardinality(w.positions) AS tf
			FROM candidates c, unnest(c.v) AS w WHERE w.lexeme IN (SELECT lexeme FROM words)
		), stats AS (
			SELECT GREATEST(count(*), 1) AS n, GREATEST(avg(char_length(text)), 1) AS avglen FROM vector_chunks WHERE space_id = $1
		), idf AS (
			SELECT lexeme, ln(1 + (stats.n - count(*) + 0.5) / (count(*) + 0.5)) AS idf FROM postings, stats GROUP BY lexeme, stats.n
		)
		SELECT p.id FROM postings p JOIN idf USING (lexeme), stats
		GROUP BY p.id
		ORDER BY sum(idf.idf * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.len / stats.avglen))) DESC, p.id
		LIMIT $4`
	return r.ids(ctx, q, args...)
}

// LinkVectorSpaceAgent links a space to an agent of the same project; linking twice is
// not an error. ErrNotFound when the agent is not in the space's project.
func (t *Tx) LinkVectorSpaceAgent(ctx context.Context, spaceID, agentID int64, at time.Time) error {
	res, err := t.exec(ctx, `INSERT INTO vector_space_agents (space_id, agent_id, created_at)
		SELECT s.id, a.id, $1 FROM vector_spaces s JOIN agents a ON a.project_id = s.project_id WHERE s.id = $2 AND a.id = $3
		ON CONFLICT DO NOTHING`, fmtTime(at), spaceID, agentID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		err := t.queryRow(ctx, `SELECT 1 FROM vector_space_agents WHERE space_id = $1 AND agent_id = $2`, spaceID, agentID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	}
	return nil
}

// UnlinkVectorSpaceAgent removes a link; removing a link that is not there is not an error.
func (t *Tx) UnlinkVectorSpaceAgent(ctx context.Context, spaceID, agentID int64) error {
	_, err := t.exec(ctx, `DELETE FROM vector_space_agents WHERE space_id = $1 AND agent_id = $2`, spaceID, agentID)
	return err
}

// AgentVectorSpaces lists the ids of the spaces linked to an agent, in id order.
func (r Reader) AgentVectorSpaces(ctx context.Context, agentID int64) ([]int64, error) {
	return r.ids(ctx, `SELECT space_id FROM vector_space_agents WHERE agent_id = $1 ORDER BY space_id`, agentID)
}
