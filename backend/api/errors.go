package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// ErrorBody is the body of every error answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong: a code from the contract and a sentence for people.
type ErrorDetail struct {
	Code    errs.Code `json:"code"`
	Message string    `json:"message"`
}

var statusOf = map[errs.Code]int{
	errs.InvalidArgument:    http.StatusBadRequest,
	errs.Unauthenticated:    http.StatusUnauthorized,
	errs.Forbidden:          http.StatusForbidden,
	errs.NotFound:           http.StatusNotFound,
	errs.Conflict:           http.StatusConflict,
	errs.PayloadTooLarge:    http.StatusRequestEntityTooLarge,
	errs.RateLimited:        http.StatusTooManyRequests,
	errs.MethodNotAllowed:   http.StatusMethodNotAllowed,
	errs.Internal:           http.StatusInternalServerError,
	errs.PreconditionFailed: http.StatusPreconditionFailed,
}

// fail answers with err in the error envelope and stops the handler chain. Internal
// errors are logged with their detail and answered with a generic sentence.
func fail(c *gin.Context, err error) {
	code, msg := errs.Public(err)
	status := statusOf[code]
	if errs.IsUnavailable(err) {
		// Said and logged once where it happened (the writer's fail-stop).
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, ErrorBody{ErrorDetail{code, msg}})
		return
	}
	if code == errs.Internal {
		if errors.Is(err, c.Request.Context().Err()) && c.Request.Context().Err() != nil {
			// The client went away; nobody is left to answer.
			c.Abort()
			return
		}
		slog.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
	}
	if code == errs.Unauthenticated {
		c.Header("WWW-Authenticate", `Bearer realm="agentdesk"`)
	}
	c.AbortWithStatusJSON(status, ErrorBody{ErrorDetail{code, msg}})
}
