package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Mentions (issue 43 item 5): a message's own list is the column messages.mentions
// (JSON, read and written with the message); table message_mentions indexes the same
// mentions by whom they name.

// mentionsJSON is the stored form of a message's mentions ("[]" for none).
func mentionsJSON(ms []model.Mention) string {
	if len(ms) == 0 {
		return "[]"
	}
	b, err := json.Marshal(ms)
	if err != nil { // a slice of plain structs always marshals
		panic(err)
	}
	return string(b)
}

// parseMentions sets m.Mentions from their stored form.
func parseMentions(stored string, m *model.Message) error {
	m.Mentions = []model.Mention{}
	if stored == "" || stored == "[]" {
		return nil
	}
	if err := json.Unmarshal([]byte(stored), &m.Mentions); err != nil {
		return fmt.Errorf("message %d: stored mentions: %w", m.ID, err)
	}
	return nil
}

// IndexMentions records whom a stored message mentions, for MentionsOf.
func (t *Tx) IndexMentions(ctx context.Context, messageID int64, ms []model.Mention) error {
	for _, mn := range ms {
		target := mn.UserID
		if mn.Kind == model.ActorAgent {
			target = mn.AgentID
		}
		if target == nil {
			return fmt.Errorf("mention %q of kind %s names no id", mn.Name, mn.Kind)
		}
		if _, err := t.exec(ctx,
			`INSERT INTO message_mentions (message_id, kind, target_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			messageID, mn.Kind, *target); err != nil {
			return err
		}
	}
	return nil
}

// MentionFilter pages the messages of a project that mention one member (kind user,
// their user id) or agent (kind agent, its id), newest first: at most Limit (0: no
// limit) before the message BeforeID (0: from the newest).
type MentionFilter struct {
	ProjectID string
	Kind      string
	TargetID  int64
	BeforeID  int64
	Limit     int
}

// MentionsOf lists the messages that mention f's member or agent, newest first, with
// their reaction counts: two queries. more reports whether older ones remain.
func (r Reader) MentionsOf(ctx context.Context, f MentionFilter) (msgs []model.Message, more bool, err error) {
	q := `SELECT ` + messageColumns + ` FROM message_mentions mm
		JOIN messages m ON m.id = mm.message_id JOIN conversations c ON c.id = m.conversation_id
		WHERE mm.kind = $1 AND mm.target_id = $2 AND c.project_id = $3`
	args := []any{f.Kind, f.TargetID, f.ProjectID}
	if f.BeforeID > 0 {
		q += ` AND mm.message_id < $4`
		args = append(args, f.BeforeID)
	}
	q += ` ORDER BY mm.message_id DESC`
	if f.Limit > 0 {
		q += limitClause(f.Limit + 1)
	}
	msgs, err = queryList(ctx, r, func(row rowScanner) (*model.Message, error) { return scanMessage(row) }, q, args...)
	if err != nil {
		return nil, false, err
	}
	if f.Limit > 0 && len(msgs) > f.Limit {
		msgs, more = msgs[:f.Limit], true
	}
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	counts, err := r.ReactionCounts(ctx, f.ProjectID, ids)
	if err != nil {
		return nil, false, err
	}
	for i := range msgs {
		if c := counts[msgs[i].ID]; c != nil {
			msgs[i].Reactions = c
		}
	}
	return msgs, more, nil
}
