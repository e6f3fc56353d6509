package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentdesk/agentdesk/backend/model"
)

// InsertDocument stores a document shared in a conversation, with its bytes, and sets
// its id. The bytes live in the database so that a backup holds them.
func (t *Tx) InsertDocument(ctx context.Context, d *model.Document, content []byte) error {
	if content == nil {
		content = []byte{} // a nil slice would be NULL
	}
	res, err := t.insert(ctx,
		`INSERT INTO documents (conversation_id, name, mime_type, size, content, uploaded_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		d.ConversationID, d.Name, d.MimeType, int64(len(content)), content, d.UploadedBy, fmtTime(d.CreatedAt))
	if err != nil {
		return err
	}
	d.ID, err = res.LastInsertId()
	d.Size = int64(len(content))
	return err
}

const documentColumns = `d.id, c.project_id, d.conversation_id, d.name, d.mime_type, d.size, d.uploaded_by, d.created_at`

func scanDocument(row interface{ Scan(...any) error }, extra ...any) (*model.Document, error) {
	var d model.Document
	var created string
	dest := append([]any{&d.ID, &d.ProjectID, &d.ConversationID, &d.Name, &d.MimeType, &d.Size, &d.UploadedBy, &created}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	d.CreatedAt = parseTime(created)
	d.Derive()
	return &d, nil
}

// DocumentFilter pages a conversation's documents. Limit 0 means no limit.
type DocumentFilter struct {
	ConversationID int64
	AfterID        int64
	Limit          int
}

// Documents lists a conversation's documents, oldest first, without their bytes. more
// reports whether documents remain after the last one returned.
func (r Reader) Documents(ctx context.Context, f DocumentFilter) (docs []model.Document, more bool, err error) {
	q := `SELECT ` + documentColumns + ` FROM documents d JOIN conversations c ON c.id = d.conversation_id
		WHERE d.conversation_id = $1 AND d.id > $2 ORDER BY d.id`
	args := []any{f.ConversationID, f.AfterID}
	if f.Limit > 0 {
		q += limitClause(f.Limit + 1)
	}
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	docs = make([]model.Document, 0, max(f.Limit, 16))
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, false, err
		}
		docs = append(docs, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if f.Limit > 0 && len(docs) > f.Limit {
		docs, more = docs[:f.Limit], true
	}
	return docs, more, nil
}

// Document loads a document of the conversation without its bytes.
func (r Reader) Document(ctx context.Context, conversationID, id int64) (*model.Document, error) {
	d, err := scanDocument(r.queryRow(ctx,
		`SELECT `+documentColumns+` FROM documents d JOIN conversations c ON c.id = d.conversation_id
		 WHERE d.id = $1 AND d.conversation_id = $2`, id, conversationID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return d, err
}

// DocumentContent loads a document of the conversation with its bytes.
func (r Reader) DocumentContent(ctx context.Context, conversationID, id int64) (*model.Document, []byte, error) {
	var content []byte
	d, err := scanDocument(r.queryRow(ctx,
		`SELECT `+documentColumns+`, d.content FROM documents d JOIN conversations c ON c.id = d.conversation_id
		 WHERE d.id = $1 AND d.conversation_id = $2`, id, conversationID), &content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	return d, content, nil
}
