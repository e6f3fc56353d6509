package service

import (
	"context"
	"strings"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
)

// The rules of watching the event stream, on /api/events and through GraphQL
// subscriptions alike. The stream itself (backend/events) sends a caller only its own
// project's events that MayReceive allows; the Watch checks let a stream or a
// subscription fail at once, with a clear error, when it could never receive anything.

// MayReceive reports whether p may receive events of the type: task and agent events
// need task:read; conversation events (messages, reactions, documents, participants)
// need messaging:read; the stream's own (stream.reset) go to everyone; the rest
// (tokens, projects, members, jobs, skills, budgets, knowledge bases) need admin.
func MayReceive(p *auth.Principal, typ string) bool {
	switch {
	case strings.HasPrefix(typ, "stream."):
		return true
	case strings.HasPrefix(typ, "task."), strings.HasPrefix(typ, "agent."):
		return p.Has(auth.TaskRead)
	case strings.HasPrefix(typ, "conversation."), strings.HasPrefix(typ, "message."),
		strings.HasPrefix(typ, "reaction."), strings.HasPrefix(typ, "document."), strings.HasPrefix(typ, "participant."):
		return p.Has(auth.MessagingRead)
	}
	return p.Has(auth.Admin)
}

// WatchEvents checks that the principal may open the event stream (/api/events): it
// must be able to receive task or conversation events.
func (s *Service) WatchEvents(ctx context.Context, p *auth.Principal) error {
	if p == nil {
		return errs.Unauth("authentication required")
	}
	if !MayReceive(p, EventTaskUpdated) && !MayReceive(p, EventMessageCreated) {
		return errs.Forbid("the event stream needs the task:read or messaging:read scope")
	}
	return nil
}

// WatchTasks checks that the principal may follow its project's task changes.
func (s *Service) WatchTasks(ctx context.Context, p *auth.Principal) error {
	if MayReceive(p, EventTaskUpdated) {
		return nil
	}
	return require(p, auth.TaskRead) // says what is missing
}

// WatchMessages checks that the principal may follow a conversation's new messages and
// returns the conversation's id (ref is the id or the uuid; another project's is not found).
func (s *Service) WatchMessages(ctx context.Context, p *auth.Principal, ref string) (int64, error) {
	if !MayReceive(p, EventMessageCreated) {
		return 0, require(p, auth.MessagingRead)
	}
	return s.conversationID(ctx, s.store.Read(), p.ProjectID, ref)
}
