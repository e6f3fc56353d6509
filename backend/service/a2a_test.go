package service_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestA2AStates: the contract's mapping, and the way back lands on the same status
// (Backlog, which A2A cannot tell from Todo, excepted).
func TestA2AStates(t *testing.T) {
	want := map[string]a2a.TaskState{
		model.StatusBacklog: a2a.TaskStateSubmitted, model.StatusTodo: a2a.TaskStateSubmitted,
		model.StatusDoing: a2a.TaskStateWorking, model.StatusWaiting: a2a.TaskStateInputRequired,
		model.StatusDone: a2a.TaskStateCompleted, model.StatusFailed: a2a.TaskStateFailed,
	}
	for _, status := range model.TaskStatuses {
		state := service.A2AState(status)
		if state != want[status] {
			t.Errorf("%s: %s; want %s", status, state, want[status])
		}
		back := service.StatusOfA2AState(state)
		if back != status && status != model.StatusBacklog {
			t.Errorf("%s -> %s -> %s", status, state, back)
		}
	}
	for state, status := range map[a2a.TaskState]string{a2a.TaskStateCanceled: model.StatusFailed, a2a.TaskStateRejected: model.StatusFailed,
		a2a.TaskStateAuthRequired: model.StatusWaiting, a2a.TaskStateUnknown: ""} {
		if got := service.StatusOfA2AState(state); got != status {
			t.Errorf("%s: %q; want %q", state, got, status)
		}
	}
}
