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
	if c.GetHeader("Authorization") != "" {
		token, err := bearerToken(c)
		if err == nil {
			_, err = h.svc.AuthenticateToken(c.Request.Context(), token)
		}
		if err == nil {
			err = errs.Forbid("the agent callback is for agents: authenticate with X-Task-Authorization and X-Agent-Name, not a Bearer token")
		}
		return err
	}
	if c.GetHeader(HeaderTaskAuthorization) == "" {
		return errs.Unauth("missing credentials: the agent callback takes the agent headers X-Task-Authorization and X-Agent-Name")
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
	p, err := h.svc.AuthenticateAgent(c.Request.Context(), in.ProjectID, c.GetHeader(HeaderTaskAuthorization), c.GetHeader(HeaderAgentName))
	if err != nil {
		return err
	}
	withActor(c, p)
	task, err := h.svc.AgentCallback(ifMatch(c), p, id, in, idempotencyKey(c))
	return writeTaskOr(c, task, err)
}
