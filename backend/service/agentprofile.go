package service

import (
	"context"
	"errors"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Event types of agents besides agent.created; they need task:read, like agent.created.
const (
	EventAgentUpdated = "agent.updated"
	EventAgentDeleted = "agent.deleted"
)

// Bounds on an agent's profile.
const (
	MaxAgentDisplayNameLen = 200
	MaxAgentDescriptionLen = 10_000
)

// UpdateAgentInput changes an agent's profile; nil fields stay as they are, "" clears.
type UpdateAgentInput struct {
	DisplayName *string
	Description *string
}

// UpdateAgent changes the profile of an agent of the principal's project (admin). The
// agent's name, which it authenticates with, does not change.
func (s *Service) UpdateAgent(ctx context.Context, p *auth.Principal, id int64, in UpdateAgentInput) (*model.Agent, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if in.DisplayName != nil {
		if err := checkText("displayName", *in.DisplayName, false, MaxAgentDisplayNameLen); err != nil {
			return nil, err
		}
	}
	if in.Description != nil {
		if err := checkText("description", *in.Description, false, MaxAgentDescriptionLen); err != nil {
			return nil, err
		}
	}
	now := s.clock()
	var out *model.Agent
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		a, err := s.loadAgent(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return err
		}
		if in.DisplayName != nil {
			a.DisplayName = *in.DisplayName
		}
		if in.Description != nil {
			a.Description = *in.Description
		}
		if err := tx.UpdateAgentProfile(ctx, a); err != nil {
			return internal("update agent", err)
		}
		out = a
		return tx.AppendEvent(ctx, p.ProjectID, EventAgentUpdated, a, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteAgent removes an agent of the principal's project (admin). Its tasks become
// unassigned (each with its task.updated event, status unchanged), it leaves its
// conversations (participant.removed), its messages stay; then agent.deleted.
func (s *Service) DeleteAgent(ctx context.Context, p *auth.Principal, id int64) error {
	if err := require(p, auth.Admin); err != nil {
		return err
	}
	now := s.clock()
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		a, err := s.loadAgent(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return err
		}
		taskIDs, err := tx.AgentTaskIDs(ctx, p.ProjectID, id)
		if err != nil {
			return internal("list the agent's tasks", err)
		}
		for _, taskID := range taskIDs {
			t, err := s.loadTask(ctx, tx.Reader, p.ProjectID, taskID)
			if err != nil {
				return err
			}
			t.AgentID, t.AgentName = nil, ""
			if _, err := s.saveTask(ctx, tx, t, nil, now); err != nil {
				return err
			}
		}
		convIDs, err := tx.AgentConversationIDs(ctx, id)
		if err != nil {
			return internal("list the agent's conversations", err)
		}
		if err := tx.DeleteAgent(ctx, p.ProjectID, id); err != nil {
			return internal("delete agent", err)
		}
		agentID := a.ID
		for _, convID := range convIDs {
			ev := ParticipantEvent{convID, model.Participant{Kind: model.ActorAgent, Name: a.Name, AgentID: &agentID, CreatedAt: now}}
			if err := tx.AppendEvent(ctx, p.ProjectID, EventParticipantRemoved, ev, now); err != nil {
				return internal("record event", err)
			}
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventAgentDeleted, map[string]any{"id": a.ID, "name": a.Name}, now)
	})
}

func (s *Service) loadAgent(ctx context.Context, r store.Reader, projectID string, id int64) (*model.Agent, error) {
	a, err := r.Agent(ctx, projectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("agent %d not found", id)
	}
	if err != nil {
		return nil, internal("load agent", err)
	}
	return a, nil
}
