package service

import (
	"slices"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
)

// TaskPrecondition is an If-Match precondition on a change of one task (RFC 9110
// 13.1.1): the change is made only if the task's current ETag (model.TaskETag) is one
// of ETags, compared strongly, or, with Any (If-Match: *), if the task exists. It is
// checked inside the write that makes the change, so no other change can come between
// the check and the write. The methods that change one task take it as their last
// argument (ifMatch); nil is none (GraphQL, jobs, the MCP and A2A adapters' own calls).
type TaskPrecondition struct {
	Any   bool
	ETags []string
}

// check fails with precondition_failed when task id, at version, does not meet pc. A
// nil pc (no If-Match) is met by any task. Call it in the write, after loading the task
// and before changing it.
func (pc *TaskPrecondition) check(id, version int64) error {
	if pc == nil || pc.Any {
		return nil
	}
	if etag := model.TaskETag(id, version); !slices.Contains(pc.ETags, etag) {
		return errs.Precondition("task %d has changed since it was read (If-Match does not name its current ETag %s): read it again, then retry", id, etag)
	}
	return nil
}
