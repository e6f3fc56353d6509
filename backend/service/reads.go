package service

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Read markers (issue 43 item 6): a person's place in each conversation, the same on
// every device they use. Posting a message moves the poster's marker to it, so a
// person's own messages are never unread to them.

// readerOf names the person p reads as: a signed-in user is that user, a token is the
// person who made it (so every token and token session of one person shares their
// markers) or else the token itself, and the local owner is one person. Agents have no
// read markers (ok false).
func readerOf(p *auth.Principal) (reader string, ok bool) {
	switch {
	case p.Kind == auth.KindUser:
		return "user:" + strconv.FormatInt(p.UserID, 10), true
	case p.Kind == auth.KindToken && p.TokenMaker != 0:
		return "user:" + strconv.FormatInt(p.TokenMaker, 10), true
	case p.Kind == auth.KindToken:
		return "token:" + strconv.FormatInt(p.TokenID, 10), true
	case p.Kind == auth.KindOwner:
		return "owner", true
	}
	return "", false
}

// MarkReadInput is the body of PUT .../conversations/{id}/read.
type MarkReadInput struct {
	LastReadMessageID int64 `json:"lastReadMessageId"`
}

// MarkRead moves the caller's read marker in the conversation forward to a message of
// it; a marker already past that message stays.
func (s *Service) MarkRead(ctx context.Context, p *auth.Principal, ref string, in MarkReadInput) error {
	if err := require(p, auth.MessagingRead); err != nil {
		return err
	}
	if _, ok := readerOf(p); !ok {
		return errs.Forbid("agents have no read markers; only people do")
	}
	if in.LastReadMessageID <= 0 {
		return errs.Invalid("lastReadMessageId must be the id of a message of the conversation, a positive integer")
	}
	now := s.clock()
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		convID, err := s.conversationID(ctx, tx, p.ProjectID, ref)
		if err != nil {
			return err
		}
		m, err := tx.Message(ctx, p.ProjectID, in.LastReadMessageID)
		if errors.Is(err, store.ErrNotFound) || err == nil && m.ConversationID != convID {
			return errs.Invalid("message %d is not in conversation %d", in.LastReadMessageID, convID)
		}
		if err != nil {
			return internal("load message", err)
		}
		return s.markRead(ctx, tx, p, convID, m.ID, now)
	})
}

// markRead moves p's marker forward to messageID, when p has markers.
func (s *Service) markRead(ctx context.Context, tx *store.Tx, p *auth.Principal, convID, messageID int64, now time.Time) error {
	reader, ok := readerOf(p)
	if !ok {
		return nil
	}
	if err := tx.MarkRead(ctx, convID, reader, messageID, now); err != nil {
		return internal("mark read", err)
	}
	return nil
}

// addReadStates sets, on a page of conversations, the caller's marker and unread count
// in each (none for agents), in one read.
func addReadStates(ctx context.Context, r store.Reader, p *auth.Principal, convs []model.Conversation) error {
	reader, ok := readerOf(p)
	if !ok || len(convs) == 0 {
		return nil
	}
	states, err := r.ReadStates(ctx, p.ProjectID, reader, convs[0].ID, convs[len(convs)-1].ID)
	if err != nil {
		return internal("read markers", err)
	}
	for i := range convs {
		st := states[convs[i].ID]
		convs[i].LastReadMessageID, convs[i].Unread = &st.LastReadMessageID, &st.Unread
	}
	return nil
}
