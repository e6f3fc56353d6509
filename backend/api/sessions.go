package api

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/service"
)

// Browser sessions. POST /api/session trades the request's Bearer token for a session
// cookie (service/tokensession.go). A person's own sessions (team mode): GET
// /api/me/sessions lists them, DELETE /api/me/sessions/{id} ends one, DELETE
// /api/me/sessions ends them all ("sign out everywhere"). The rules are the service's
// (service/sessions.go); here the answer, and the cookie cleared when the request's own
// session ended.
type sessionsHandler struct{ svc *service.Service }

// start serves POST /api/session: 204 with the session cookie. A cookie the browser
// had already is ended, so that it keeps only the new session.
func (h sessionsHandler) start(c *gin.Context) error {
	ctx := c.Request.Context()
	value, err := h.svc.StartTokenSession(ctx, principal(c), c.Request.UserAgent(), service.ClientAddress(ctx))
	if err != nil {
		return err
	}
	if old, err := c.Request.Cookie(h.svc.OIDC().SessionCookie()); err == nil {
		if err := h.svc.EndReplacedSession(ctx, old.Value); err != nil {
			slog.Warn("session: end the replaced session", "err", err)
		}
	}
	http.SetCookie(c.Writer, (&teamHandler{cfg: h.svc.OIDC()}).cookie(value, int(service.SessionMaxAge.Seconds())))
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusNoContent)
	return nil
}

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
