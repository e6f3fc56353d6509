package service

import (
	"context"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// StepUpdate sets the status of one step in a callback.
type StepUpdate struct {
	Index  *int   `json:"index"`
	Status string `json:"status"`
}

// CallbackInput is what an agent reports about its task. Every field is optional; all
// of them are applied together or not at all.
type CallbackInput struct {
	ProjectID      string       `json:"project_id"`
	Status         string       `json:"status,omitempty"`
	Steps          []StepUpdate `json:"steps,omitempty"`
	WaitingDetails *string      `json:"waiting_details,omitempty"`
	Question                    // the question's structure, deadline and person asked (questions.go)
	Message        string       `json:"message,omitempty"`
	// Usage is what the agent used for this report (usage.go): metered per project.
	Usage *UsageInput `json:"usage,omitempty"`
}

// AgentCallback applies an agent's report to a task assigned to it, atomically: step
// statuses, then the status (waiting_details alone means Waiting), then a message
// appended to the conversation as the assistant. Only the assigned agent may call back.
func (s *Service) AgentCallback(ctx context.Context, p *auth.Principal, id int64, in CallbackInput, idemKey string, ifMatch *TaskPrecondition) (*model.Task, error) {
	if p == nil || p.Kind != auth.KindAgent {
		return nil, errs.Forbid("the agent callback is for agents: authenticate with X-Task-Authorization and X-Agent-Name")
	}
	question := in.Question.Given()
	if in.Status == "" && (in.WaitingDetails != nil || question != nil) {
		in.Status = model.StatusWaiting
	}
	if in.Status != "" && !model.IsTaskStatus(in.Status) {
		return nil, errs.Invalid("status %q is not a task status; use one of Backlog, Todo, Doing, Waiting, Done, Failed", in.Status)
	}
	if err := checkWaiting(in.Status, in.WaitingDetails, question, s.clock()); err != nil {
		return nil, err
	}
	if err := checkText("message", in.Message, false, MaxResponseLen); err != nil {
		return nil, err
	}
	if in.Usage != nil {
		if err := in.Usage.validate(); err != nil {
			return nil, err
		}
	}
	stepStatuses := make([]string, len(in.Steps))
	for i, st := range in.Steps {
		if st.Index == nil || *st.Index < 0 {
			return nil, errs.Invalid("steps[%d].index is required and must be 0 or more (steps are numbered from 0)", i)
		}
		var ok bool
		if stepStatuses[i], ok = model.ParseStepStatus(st.Status); !ok {
			return nil, errs.Invalid("steps[%d].status %q is not valid; use one of pending, in_progress, completed, skipped", i, st.Status)
		}
	}
	if err := CheckIdempotencyKey(idemKey); err != nil {
		return nil, err
	}
	input := struct {
		ID int64 `json:"id"`
		CallbackInput
	}{id, in}
	return writeOnce(ctx, s, p, idemKey, "agent-callback", input, func(tx *store.Tx, now time.Time) (*model.Task, error) {
		t, err := s.loadTask(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return nil, err
		}
		if t.AgentID == nil || *t.AgentID != p.AgentID {
			return nil, errs.Forbid("task %d is not assigned to agent %q", id, p.Name)
		}
		if err := ifMatch.check(id, t.Version); err != nil {
			return nil, err
		}
		for i, st := range in.Steps {
			if *st.Index >= len(t.Steps) {
				return nil, errs.Invalid("steps[%d].index %d is past the last step: task %d has %d steps, numbered from 0", i, *st.Index, id, len(t.Steps))
			}
			if err := tx.UpdateStepStatus(ctx, id, *st.Index, stepStatuses[i]); err != nil {
				return nil, internal("update step", err)
			}
			t.Steps[*st.Index].Status = stepStatuses[i]
		}
		if in.Status != "" {
			setStatus(t, in.Status, in.WaitingDetails, question)
		}
		if err := s.recordUsage(ctx, tx, p, id, in.Usage, now); err != nil { // usage.go
			return nil, err
		}
		var entries []model.TaskMessage
		if in.Message != "" {
			entries = append(entries, model.TaskMessage{Role: model.RoleAssistant, Content: in.Message})
		}
		return s.saveTask(ctx, tx, t, entries, now)
	})
}
