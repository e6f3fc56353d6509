package api

import (
	"errors"
	"log/slog"
	"strconv"

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

// handle adapts a REST handler to gin: the handler writes its answer, or returns the
// error that is answered here, in the error envelope.
func handle(h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			fail(c, err)
		}
	}
}

// fail answers with err in the error envelope and stops the handler chain. Internal
// errors are logged with their detail and answered with a generic sentence.
func fail(c *gin.Context, err error) {
	code, msg := errs.Public(err)
	// An Unavailable error was said and logged once where it happened (the writer's
	// fail-stop); other internal errors are logged here.
	if code == errs.Internal && !errs.IsUnavailable(err) {
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
	if secs, ok := errs.RetryAfterSeconds(err); ok {
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	c.AbortWithStatusJSON(errs.HTTPStatus(err), ErrorBody{ErrorDetail{code, msg}})
}
