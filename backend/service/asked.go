package service

import (
	"context"
	"slices"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
)

// PeopleAsked is whom a Waiting task's question is for, by email: its waiting_ask, else
// the person who created the task, else every member who may write tasks (the
// contract, "Questions with structure, deadlines and a person to ask").
//
// Interim version for the email work (issue 40): tasks carry neither waiting_ask nor
// their creator yet, so this is every member with an email who may write tasks. The
// version with waiting_ask, written beside it, replaces it at merge.
func (s *Service) PeopleAsked(ctx context.Context, t *model.Task) ([]string, error) {
	members, err := s.store.Read().Members(ctx, t.ProjectID)
	if err != nil {
		return nil, internal("list members", err)
	}
	var emails []string
	for _, m := range members {
		if m.Email != nil && *m.Email != "" && slices.Contains(RoleScopes(m.Role), auth.TaskWrite) {
			emails = append(emails, *m.Email)
		}
	}
	return emails, nil
}
