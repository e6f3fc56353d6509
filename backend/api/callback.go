package api

import (
	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// agentCallback serves POST /api/agent_callback/{id}. The project comes from the body's
// project_id, so the agent headers are checked here rather than by a route middleware.
func (h tasksHandler) agentCallback(c *gin.Context) error {
	// Credentials come first: a Bearer token is checked (401 when wrong) and refused for
	// not being an agent (403); no credentials at all is a 401 before the body is read.
	creds := credentials(h.svc, c, service.WhereCallback)
	if creds.Authorization != "" || creds.AgentDigest == "" {
		if _, err := h.svc.Authenticate(c.Request.Context(), creds); err != nil {
			return err
		}
	}
	id, err := taskID(c)
	if err != nil {
		return err
	}
	var in service.CallbackInput
	if err := bindJSON(c, &in, false); err != nil {
		return err
	}
	if in.ProjectID == "" {
		return errs.Invalid("project_id is required: the agent callback takes the project from the body")
	}
	creds.ProjectID = in.ProjectID
	p, err := h.svc.Authenticate(c.Request.Context(), creds)
	if err != nil {
		return err
	}
	task, err := h.svc.AgentCallback(c.Request.Context(), p, id, in, idempotencyKey(c), ifMatch(c))
	return writeTaskOr(c, task, err)
}
