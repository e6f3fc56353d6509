package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/agentdesk/agentdesk/backend/model"
)

// ConversationID resolves a conversation reference of the project, its integer id or its
// uuid, to the integer id.
func (r Reader) ConversationID(ctx context.Context, projectID, ref string) (int64, error) {
	var id int64
	var err error
	if n, convErr := strconv.ParseInt(ref, 10, 64); convErr == nil {
		err = r.queryRow(ctx, `SELECT id FROM conversations WHERE project_id = $1 AND id = $2`, projectID, n).Scan(&id)
	} else {
		err = r.queryRow(ctx, `SELECT id FROM conversations WHERE project_id = $1 AND uuid = $2`, projectID, ref).Scan(&id)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return id, err
}

// InsertConversation stores a new conversation, without participants, and sets its id.
func (t *Tx) InsertConversation(ctx context.Context, c *model.Conversation) error {
	res, err := t.insert(ctx, `INSERT INTO conversations (uuid, project_id, name, created_at) VALUES ($1, $2, $3, $4)`,
		c.UUID, c.ProjectID, c.Name, fmtTime(c.CreatedAt))
	if err != nil {
		return err
	}
	c.ID, err = res.LastInsertId()
	return err
}

const conversationColumns = `c.id, c.uuid, c.project_id, c.name, c.created_at`

func scanConversation(row interface{ Scan(...any) error }) (*model.Conversation, error) {
	var c model.Conversation
	var name sql.NullString
	var created string
	if err := row.Scan(&c.ID, &c.UUID, &c.ProjectID, &name, &created); err != nil {
		return nil, err
	}
	if name.Valid {
		c.Name = &name.String
	}
	c.CreatedAt = parseTime(created)
	c.Participants = []string{}
	return &c, nil
}

// Conversation loads a conversation of the project with its participants' names.
func (r Reader) Conversation(ctx context.Context, projectID string, id int64) (*model.Conversation, error) {
	c, err := scanConversation(r.queryRow(ctx,
		`SELECT `+conversationColumns+` FROM conversations c WHERE c.id = $1 AND c.project_id = $2`, id, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, `SELECT name FROM conversation_participants WHERE conversation_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		c.Participants = append(c.Participants, name)
	}
	return c, rows.Err()
}

// ConversationFilter pages a project's conversations. Limit 0 means no limit.
type ConversationFilter struct {
	ProjectID string
	AfterID   int64
	Limit     int
}

// Conversations lists a project's conversations, oldest first, with their participants'
// names: two queries whatever the number of conversations. more reports whether
// conversations remain after the last one returned.
func (r Reader) Conversations(ctx context.Context, f ConversationFilter) (convs []model.Conversation, more bool, err error) {
	q := `SELECT ` + conversationColumns + ` FROM conversations c WHERE c.project_id = $1 AND c.id > $2 ORDER BY c.id`
	args := []any{f.ProjectID, f.AfterID}
	if f.Limit > 0 {
		q += limitClause(f.Limit + 1)
	}
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	convs = make([]model.Conversation, 0, max(f.Limit, 16))
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			rows.Close()
			return nil, false, err
		}
		convs = append(convs, *c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if f.Limit > 0 && len(convs) > f.Limit {
		convs, more = convs[:f.Limit], true
	}
	if len(convs) == 0 {
		return convs, false, nil
	}

	// The page is a contiguous id range of the project's conversations, so the same
	// range selects exactly the page's participants.
	index := make(map[int64]int, len(convs))
	for i, c := range convs {
		index[c.ID] = i
	}
	prows, err := r.query(ctx,
		`SELECT p.conversation_id, p.name FROM conversation_participants p JOIN conversations c ON c.id = p.conversation_id
		 WHERE c.project_id = $1 AND c.id BETWEEN $2 AND $3 ORDER BY p.conversation_id, p.id`,
		f.ProjectID, convs[0].ID, convs[len(convs)-1].ID)
	if err != nil {
		return nil, false, err
	}
	defer prows.Close()
	for prows.Next() {
		var convID int64
		var name string
		if err := prows.Scan(&convID, &name); err != nil {
			return nil, false, err
		}
		if i, ok := index[convID]; ok {
			convs[i].Participants = append(convs[i].Participants, name)
		}
	}
	return convs, more, prows.Err()
}

// AddParticipant makes p a participant of the conversation; added is false when it
// already was one (a participant is identified by its kind and name).
func (t *Tx) AddParticipant(ctx context.Context, conversationID int64, p model.Participant) (added bool, err error) {
	res, err := t.exec(ctx,
		`INSERT INTO conversation_participants (conversation_id, kind, name, agent_id, created_at) VALUES ($1, $2, $3, $4, $5)
		 ON CONFLICT (conversation_id, kind, name) DO NOTHING`,
		conversationID, p.Kind, p.Name, p.AgentID, fmtTime(p.CreatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// RemoveParticipant removes a participant; removed is false when there was none.
func (t *Tx) RemoveParticipant(ctx context.Context, conversationID int64, kind, name string) (removed bool, err error) {
	res, err := t.exec(ctx, `DELETE FROM conversation_participants WHERE conversation_id = $1 AND kind = $2 AND name = $3`,
		conversationID, kind, name)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Participants lists a conversation's participants in the order they joined.
func (r Reader) Participants(ctx context.Context, conversationID int64) ([]model.Participant, error) {
	rows, err := r.query(ctx,
		`SELECT kind, name, agent_id, created_at FROM conversation_participants WHERE conversation_id = $1 ORDER BY id`,
		conversationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []model.Participant{}
	for rows.Next() {
		var p model.Participant
		var agentID sql.NullInt64
		var created string
		if err := rows.Scan(&p.Kind, &p.Name, &agentID, &created); err != nil {
			return nil, err
		}
		if agentID.Valid {
			p.AgentID = &agentID.Int64
		}
		p.CreatedAt = parseTime(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// InsertMessage stores a new message and sets its id.
func (t *Tx) InsertMessage(ctx context.Context, m *model.Message) error {
	res, err := t.insert(ctx,
		`INSERT INTO messages (conversation_id, author, author_type, agent_id, content, created_at, mentions) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		m.ConversationID, m.Author, m.AuthorType, m.AgentID, m.Content, fmtTime(m.CreatedAt), mentionsJSON(m.Mentions))
	if err != nil {
		return err
	}
	m.ID, err = res.LastInsertId()
	return err
}

const messageColumns = `m.id, m.conversation_id, m.author, m.author_type, m.agent_id, m.content, m.created_at, m.mentions`

func scanMessage(row interface{ Scan(...any) error }) (*model.Message, error) {
	var m model.Message
	var agentID sql.NullInt64
	var created, mentions string
	if err := row.Scan(&m.ID, &m.ConversationID, &m.Author, &m.AuthorType, &agentID, &m.Content, &created, &mentions); err != nil {
		return nil, err
	}
	if err := parseMentions(mentions, &m); err != nil {
		return nil, err
	}
	if agentID.Valid {
		m.AgentID = &agentID.Int64
	}
	m.CreatedAt = parseTime(created)
	m.Reactions = []model.ReactionCount{}
	return &m, nil
}

// Message loads a message of the project with its reaction counts.
func (r Reader) Message(ctx context.Context, projectID string, id int64) (*model.Message, error) {
	m, err := scanMessage(r.queryRow(ctx,
		`SELECT `+messageColumns+` FROM messages m JOIN conversations c ON c.id = m.conversation_id
		 WHERE m.id = $1 AND c.project_id = $2`, id, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	counts, err := r.ReactionCounts(ctx, projectID, []int64{id})
	if err != nil {
		return nil, err
	}
	if c := counts[id]; c != nil {
		m.Reactions = c
	}
	return m, nil
}

// MessageFilter pages a conversation's messages. Limit 0 means no limit.
type MessageFilter struct {
	ConversationID int64
	AfterID        int64
	Limit          int
}

// Messages lists a conversation's messages, oldest first, with their reaction counts:
// two queries whatever the number of messages. more reports whether messages remain
// after the last one returned.
func (r Reader) Messages(ctx context.Context, f MessageFilter) (msgs []model.Message, more bool, err error) {
	q := `SELECT ` + messageColumns + ` FROM messages m WHERE m.conversation_id = $1 AND m.id > $2 ORDER BY m.id`
	args := []any{f.ConversationID, f.AfterID}
	if f.Limit > 0 {
		q += limitClause(f.Limit + 1)
	}
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	msgs = make([]model.Message, 0, max(f.Limit, 16))
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			rows.Close()
			return nil, false, err
		}
		msgs = append(msgs, *m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if f.Limit > 0 && len(msgs) > f.Limit {
		msgs, more = msgs[:f.Limit], true
	}
	if len(msgs) == 0 {
		return msgs, false, nil
	}

	// The page is a contiguous id range of the conversation's messages, so the same
	// range selects exactly the page's reactions.
	index := make(map[int64]int, len(msgs))
	for i, m := range msgs {
		index[m.ID] = i
	}
	rrows, err := r.query(ctx,
		`SELECT r.message_id, r.emoji, COUNT(*) FROM reactions r JOIN messages m ON m.id = r.message_id
		 WHERE m.conversation_id = $1 AND m.id BETWEEN $2 AND $3
		 GROUP BY r.message_id, r.emoji ORDER BY r.message_id, MIN(r.created_at), r.emoji`,
		f.ConversationID, msgs[0].ID, msgs[len(msgs)-1].ID)
	if err != nil {
		return nil, false, err
	}
	defer rrows.Close()
	for rrows.Next() {
		var msgID int64
		var rc model.ReactionCount
		if err := rrows.Scan(&msgID, &rc.Emoji, &rc.Count); err != nil {
			return nil, false, err
		}
		if i, ok := index[msgID]; ok {
			msgs[i].Reactions = append(msgs[i].Reactions, rc)
		}
	}
	return msgs, more, rrows.Err()
}

// ReactionCounts gives the reaction counts per emoji of any set of the project's
// messages, in one query (for callers that hold messages from several places, such as
// a GraphQL loader). Messages without reactions, or not of the project, are absent.
func (r Reader) ReactionCounts(ctx context.Context, projectID string, messageIDs []int64) (map[int64][]model.ReactionCount, error) {
	out := map[int64][]model.ReactionCount{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	seen := make(map[int64]bool, len(messageIDs))
	args := make([]any, 0, len(messageIDs)+1)
	args = append(args, projectID)
	var sb strings.Builder
	sb.WriteString(`SELECT r.message_id, r.emoji, COUNT(*) FROM reactions r
		JOIN messages m ON m.id = r.message_id JOIN conversations c ON c.id = m.conversation_id
		WHERE c.project_id = $1 AND r.message_id IN (`)
	for _, id := range messageIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		if len(args) > 1 {
			sb.WriteString(", ")
		}
		args = append(args, id)
		sb.WriteString("$" + strconv.Itoa(len(args)))
	}
	sb.WriteString(`) GROUP BY r.message_id, r.emoji ORDER BY r.message_id, MIN(r.created_at), r.emoji`)
	// The text varies with the number of ids: run it unprepared rather than fill the
	// statement cache with one variant per list length.
	rows, err := r.q.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var msgID int64
		var rc model.ReactionCount
		if err := rows.Scan(&msgID, &rc.Emoji, &rc.Count); err != nil {
			return nil, err
		}
		out[msgID] = append(out[msgID], rc)
	}
	return out, rows.Err()
}

// AddReaction records an actor's emoji on a message; added is false when the actor had
// already reacted with that emoji.
func (t *Tx) AddReaction(ctx context.Context, rc model.Reaction) (added bool, err error) {
	res, err := t.exec(ctx,
		`INSERT INTO reactions (message_id, emoji, actor_kind, actor, created_at) VALUES ($1, $2, $3, $4, $5)
		 ON CONFLICT (message_id, emoji, actor_kind, actor) DO NOTHING`,
		rc.MessageID, rc.Emoji, rc.ActorKind, rc.Actor, fmtTime(rc.CreatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// RemoveReaction takes an actor's emoji off a message; removed is false when there was
// no such reaction.
func (t *Tx) RemoveReaction(ctx context.Context, messageID int64, emoji, actorKind, actor string) (removed bool, err error) {
	res, err := t.exec(ctx,
		`DELETE FROM reactions WHERE message_id = $1 AND emoji = $2 AND actor_kind = $3 AND actor = $4`,
		messageID, emoji, actorKind, actor)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Reactions lists every reaction on a message, oldest first: who reacted with what.
func (r Reader) Reactions(ctx context.Context, messageID int64) ([]model.Reaction, error) {
	rows, err := r.query(ctx,
		`SELECT message_id, emoji, actor_kind, actor, created_at FROM reactions WHERE message_id = $1
		 ORDER BY created_at, emoji, actor_kind, actor`, messageID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []model.Reaction{}
	for rows.Next() {
		var rc model.Reaction
		var created string
		if err := rows.Scan(&rc.MessageID, &rc.Emoji, &rc.ActorKind, &rc.Actor, &created); err != nil {
			return nil, err
		}
		rc.CreatedAt = parseTime(created)
		out = append(out, rc)
	}
	return out, rows.Err()
}
