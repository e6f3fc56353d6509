package service

import (
	"context"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// EditTaskInput changes what a task says (PATCH /api/tasks/{id}, GraphQL updateTask).
// A field left out (nil) stays as it is.
type EditTaskInput struct {
	Summary *string `json:"summary"`
	Details *string `json:"details"`
	// Steps are the step titles in order: the steps already there keep their status
	// (and id, which follows from the position), steps past their number are added as
	// pending, and a shorter list removes the last steps.
	Steps *[]StepInput `json:"steps"`
}

// validate applies the rules of a new task (CreateTaskInput.validate) to what is given.
func (in *EditTaskInput) validate() error {
	if in.Summary == nil && in.Details == nil && in.Steps == nil {
		return errs.Invalid("nothing to change: give summary, details or steps")
	}
	check := CreateTaskInput{Summary: "x"}
	if in.Summary != nil {
		check.Summary = *in.Summary
	}
	if in.Details != nil {
		check.Details = *in.Details
	}
	if in.Steps != nil {
		check.Steps = *in.Steps
	}
	return check.validate()
}

// EditTask changes a task's summary, details or step titles; its status, agent and
// conversation stay. If-Match is honoured like every task change (updateTask).
func (s *Service) EditTask(ctx context.Context, p *auth.Principal, id int64, in EditTaskInput, ifMatch *TaskPrecondition) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	return s.updateTask(ctx, p, id, ifMatch, func(tx *store.Tx, t *model.Task) error {
		if in.Summary != nil {
			t.Summary = *in.Summary
		}
		if in.Details != nil {
			t.Details = *in.Details
		}
		if in.Steps == nil {
			return nil
		}
		steps := make([]model.Step, len(*in.Steps))
		for i, st := range *in.Steps {
			steps[i] = model.Step{ID: model.StepID(t.ID, i), Title: st.Title, Status: model.StepPending}
			if i < len(t.Steps) {
				steps[i].Status = t.Steps[i].Status
			}
		}
		if err := tx.UpdateSteps(ctx, t.ID, steps); err != nil {
			return internal("update steps", err)
		}
		t.Steps = steps
		return nil
	})
}
