package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// agentCallback serves POST /api/agent_callback/{id}. The project comes from the body's
// project_id, so the agent headers are checked here rather than by a route middleware.
func (h tasksHandler) agentCallback(c *gin.Context) {
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
		fail(c, err)
		return
	}
	if c.GetHeader(HeaderTaskAuthorization) == "" {
		fail(c, errs.Unauth("missing credentials: the agent callback takes the agent headers X-Task-Authorization and X-Agent-Name"))
		return
	}
	id, err := pathID(c, "id", "task id")
	if err != nil {
		fail(c, err)
		return
	}
	body, err := readBody(c, MaxJSONBody)
	if err != nil {
		fail(c, err)
		return
	}
	var in service.CallbackInput
	if err := decodeJSON(body, &in, false); err != nil {
		fail(c, err)
		return
	}
	if in.ProjectID == "" {
		fail(c, errs.Invalid("project_id is required: the agent callback takes the project from the body"))
		return
	}
	p, err := h.svc.AuthenticateAgent(c.Request.Context(), in.ProjectID, c.GetHeader(HeaderTaskAuthorization), c.GetHeader(HeaderAgentName))
	if err != nil {
		fail(c, err)
		return
	}
	withActor(c, p)
	task, err := h.svc.AgentCallback(ifMatch(c), p, id, in, idempotencyKey(c))
	writeTask(c, http.StatusOK, task, err)
}
