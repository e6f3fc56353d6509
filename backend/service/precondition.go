package service

import (
	"context"
	"slices"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
)

// TaskPrecondition is an If-Match precondition on a change of one task (RFC 9110
// 13.1.1): the change is made only if the task's current ETag (model.TaskETag) is one
// of ETags, compared strongly, or, with Any (If-Match: *), if the task exists. It is
// checked inside the write that makes the change, so no other change can come between
// the check and the write.
type TaskPrecondition struct {
	Any   bool
	ETags []string
}

type taskPreconditionKey struct{}

// WithTaskPrecondition returns ctx carrying pc for the task change made with it
// (SetTaskStatus, AssignTask, SetStepStatus, Respond, AgentCallback, DeleteTask). It
// travels in the context rather than as an argument because it is a condition of the
// HTTP request, the same for every kind of change; callers that have none (GraphQL,
// jobs) pass nothing and are unaffected.
func WithTaskPrecondition(ctx context.Context, pc TaskPrecondition) context.Context {
	return context.WithValue(ctx, taskPreconditionKey{}, pc)
}

func taskPrecondition(ctx context.Context) (TaskPrecondition, bool) {
	pc, ok := ctx.Value(taskPreconditionKey{}).(TaskPrecondition)
	return pc, ok
}

// checkTaskPrecondition fails with precondition_failed when ctx carries a
// precondition that task id, at version, does not meet. Call it in the write, after
// loading the task and before changing it.
func checkTaskPrecondition(ctx context.Context, id, version int64) error {
	pc, ok := taskPrecondition(ctx)
	if !ok || pc.Any {
		return nil
	}
	if etag := model.TaskETag(id, version); !slices.Contains(pc.ETags, etag) {
		return errs.Precondition("task %d has changed since it was read (If-Match does not name its current ETag %s): read it again, then retry", id, etag)
	}
	return nil
}
