package store

import (
	"context"
	"time"
)

// Read markers (issue 43 item 6, table conversation_reads): how far a reader, a person
// named by the service, has read a conversation. A marker only moves forward.

// ReadState is a reader's place in one conversation: the last message read (0 for
// none) and how many messages come after it.
type ReadState struct {
	LastReadMessageID int64
	Unread            int64
}

// MarkRead moves reader's marker in the conversation forward to messageID; a marker
// already at or past it stays where it is.
func (t *Tx) MarkRead(ctx context.Context, conversationID int64, reader string, messageID int64, at time.Time) error {
	_, err := t.exec(ctx,
		`INSERT INTO conversation_reads (conversation_id, reader, last_read_message_id, updated_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (conversation_id, reader) DO UPDATE SET last_read_message_id = excluded.last_read_message_id, updated_at = excluded.updated_at
		 WHERE excluded.last_read_message_id > conversation_reads.last_read_message_id`,
		conversationID, reader, messageID, fmtTime(at))
	return err
}

// ReadStates is reader's place in each of the project's conversations whose ids lie in
// [firstID, lastID] (a page of Conversations), in one query whatever their number.
func (r Reader) ReadStates(ctx context.Context, projectID, reader string, firstID, lastID int64) (map[int64]ReadState, error) {
	rows, err := r.query(ctx,
		`SELECT c.id, COALESCE(cr.last_read_message_id, 0),
		   (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND m.id > COALESCE(cr.last_read_message_id, 0))
		 FROM conversations c LEFT JOIN conversation_reads cr ON cr.conversation_id = c.id AND cr.reader = $2
		 WHERE c.project_id = $1 AND c.id BETWEEN $3 AND $4`,
		projectID, reader, firstID, lastID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	states := map[int64]ReadState{}
	for rows.Next() {
		var id int64
		var s ReadState
		if err := rows.Scan(&id, &s.LastReadMessageID, &s.Unread); err != nil {
			return nil, err
		}
		states[id] = s
	}
	return states, rows.Err()
}
