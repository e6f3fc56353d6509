package api

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/service"
)

// backup answers GET /api/backup: a consistent copy of the database as an attachment.
func backup(svc *service.Service) gin.HandlerFunc {
	return handle(func(c *gin.Context) error {
		exp, err := svc.ExportDatabase(c.Request.Context(), principal(c))
		if err != nil {
			return err
		}
		defer exp.Remove()
		name := "agentdesk-" + time.Now().Format("2006-01-02") + ".db"
		h := c.Writer.Header()
		h.Set("Content-Type", "application/vnd.sqlite3")
		h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
		h.Set("Content-Length", strconv.FormatInt(exp.Size, 10))
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		c.Status(http.StatusOK)
		if _, err := io.Copy(c.Writer, exp.File); err != nil {
			slog.Warn("backup download interrupted", "err", err)
		}
		return nil
	})
}

// about answers GET /api/about: the version and, for administrators, the data directory.
func about(svc *service.Service) gin.HandlerFunc {
	return handle(func(c *gin.Context) error {
		a, err := svc.About(c.Request.Context(), principal(c))
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, a)
		return nil
	})
}
