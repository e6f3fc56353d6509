package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/service"
)

// mentions serves GET /api/projects/{projectId}/mentions: the messages that mention
// the caller, newest first, paged with limit and before_id (the Link header points at
// the older page).
func (h conversationsHandler) mentions(c *gin.Context) error {
	in := service.MentionsInput{Limit: service.DefaultMentionsLimit}
	if v, ok, err := queryInt(c, "limit"); err != nil {
		return err
	} else if ok {
		in.Limit = int(v)
	}
	v, _, err := queryInt(c, "before_id")
	if err != nil {
		return err
	}
	in.BeforeID = v
	msgs, more, err := h.svc.Mentions(c.Request.Context(), principal(c), in)
	if err != nil {
		return err
	}
	if more {
		setPageLink(c, "before_id", msgs[len(msgs)-1].ID)
	}
	c.JSON(http.StatusOK, msgs)
	return nil
}
