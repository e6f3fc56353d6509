package service

import (
	"context"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// CommentInput is a comment on a task. Content also comes as message, the word the
// conversation endpoints use.
type CommentInput struct {
	Content *string `json:"content,omitempty"`
	Message *string `json:"message,omitempty"`
}

// CommentTask adds a comment to a task's conversation, in any status, without changing
// anything else: the thread is where people and agents talk about a task, not only
// where questions are answered. It needs task:write; the entry carries its author.
func (s *Service) CommentTask(ctx context.Context, p *auth.Principal, id int64, in CommentInput, idemKey string, ifMatch *TaskPrecondition) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	text, err := textOrSynonym("content", in.Content, "message", in.Message, MaxResponseLen)
	if err != nil {
		return nil, err
	}
	if err := CheckIdempotencyKey(idemKey); err != nil {
		return nil, err
	}
	input := struct {
		ID      int64  `json:"id"`
		Content string `json:"content"`
	}{id, text} // content and message with the same text are the same request
	return writeOnce(ctx, s, p, idemKey, "comment", input, func(tx *store.Tx, now time.Time) (*model.Task, error) {
		t, err := s.loadTask(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return nil, err
		}
		if err := ifMatch.check(id, t.Version); err != nil {
			return nil, err
		}
		return s.saveTask(ctx, tx, t, []model.TaskMessage{{Role: roleOf(p), Content: text}}, now)
	})
}
