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
	creds := credentials(c, service.WhereCallback)
	if creds.Authorization != "" || creds.AgentDigest == "" {
		if _, err := h.svc.Authenticate(c.Request.Context(), creds); err != nil {
			fail(c, err)
			return
		}
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
	if in.WaitingDetails != nil {
		if err := checkUnusedSynonym(in.WaitingDetailsCamel); err != nil {
			fail(c, err)
			return
		}
	}
	if in.ProjectID == "" {
		fail(c, errs.Invalid("project_id is required: the agent callback takes the project from the body"))
		return
	}
	creds.ProjectID = in.ProjectID
	p, err := h.svc.Authenticate(c.Request.Context(), creds)
	if err != nil {
		fail(c, err)
		return
	}
	task, err := h.svc.AgentCallback(ifMatch(c), p, id, in, idempotencyKey(c))
	writeTask(c, http.StatusOK, task, err)
}
