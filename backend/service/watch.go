package service

import (
	"context"

	"github.com/agentdesk/agentdesk/backend/auth"
)

// The rules of watching the event stream through GraphQL subscriptions. The stream
// itself (backend/events) sends a caller only its own project's events that its scopes
// can read; these checks let a subscription fail at once, with a clear error, when it
// could never receive anything.

// WatchTasks checks that the principal may follow its project's task changes.
func (s *Service) WatchTasks(ctx context.Context, p *auth.Principal) error {
	return require(p, auth.TaskRead)
}

// WatchMessages checks that the principal may follow a conversation's new messages and
// returns the conversation's id (ref is the id or the uuid; another project's is not found).
func (s *Service) WatchMessages(ctx context.Context, p *auth.Principal, ref string) (int64, error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return 0, err
	}
	return s.conversationID(ctx, s.store.Read(), p.ProjectID, ref)
}
