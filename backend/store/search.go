package store

import (
	"context"
	"strings"
	"time"
)

// TextMatch is a message or a document that a project-wide search found, with its
// conversation: for a message, Author wrote Text (its content); for a document, Author
// shared it and Text is its name.
type TextMatch struct {
	ID               int64
	ConversationID   int64
	ConversationName string // "" for an unnamed conversation
	Author           string
	Text             string
	CreatedAt        time.Time
}

// The searches of messages and documents match the text as typed anywhere in a message's
// content or a document's name, ignoring the case of ASCII letters (SQLite's LIKE,
// PostgreSQL's ILIKE on the "C" collation), newest first. They read every message (or
// document) of the project's conversations: enough for a team's tens of thousands of
// messages, and no index to keep.
// SearchMessages finds the project's messages whose content holds text, newest first, at
// most limit.
func (r Reader) SearchMessages(ctx context.Context, projectID, text string, limit int) ([]TextMatch, error) {
	return r.searchText(ctx, r.sql.searchMessages, projectID, text, limit)
}

// SearchDocuments finds the project's documents whose name holds text, newest first, at
// most limit. Their content is not searched (it may be any bytes).
func (r Reader) SearchDocuments(ctx context.Context, projectID, text string, limit int) ([]TextMatch, error) {
	return r.searchText(ctx, r.sql.searchDocuments, projectID, text, limit)
}

func (r Reader) searchText(ctx context.Context, query, projectID, text string, limit int) ([]TextMatch, error) {
	rows, err := r.query(ctx, query, projectID, "%"+likeEscaper.Replace(text)+"%", limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []TextMatch
	for rows.Next() {
		var m TextMatch
		var created string
		if err := rows.Scan(&m.ID, &m.ConversationID, &m.ConversationName, &m.Author, &m.Text, &created); err != nil {
			return nil, err
		}
		m.CreatedAt = parseTime(created)
		found = append(found, m)
	}
	return found, rows.Err()
}

// likeEscaper makes text match itself in a LIKE pattern with ESCAPE '\'.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
