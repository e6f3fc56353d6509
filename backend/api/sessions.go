package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/service"
)

// A person's own sessions (team mode): GET /api/me/sessions lists them, DELETE
// /api/me/sessions/{id} ends one, DELETE /api/me/sessions ends them all ("sign out
// everywhere"). The rules are the service's (service/sessions.go); here the answer,
// and the cookie cleared when the request's own session ended.
type sessionsHandler struct{ svc *service.Service }

func (h sessionsHandler) list(c *gin.Context) error {
	list, err := h.svc.Sessions(c.Request.Context(), principal(c))
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"sessions": list})
	return nil
}

func (h sessionsHandler) end(c *gin.Context) error {
	id, err := pathID(c, "sessionId", "the session id")
	if err != nil {
		return err
	}
	current, err := h.svc.EndOwnSession(c.Request.Context(), principal(c), id)
	if err != nil {
		return err
	}
	if current {
		h.clearCookie(c)
	}
	c.Status(http.StatusNoContent)
	return nil
}

func (h sessionsHandler) endAll(c *gin.Context) error {
	if err := h.svc.EndAllSessions(c.Request.Context(), principal(c)); err != nil {
		return err
	}
	h.clearCookie(c)
	c.Status(http.StatusNoContent)
	return nil
}

func (h sessionsHandler) clearCookie(c *gin.Context) {
	http.SetCookie(c.Writer, (&teamHandler{cfg: h.svc.OIDC()}).cookie("", -1))
}
