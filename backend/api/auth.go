package api

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

const principalKey = "agentdesk.principal"

// principal is the authenticated caller of the request.
func principal(c *gin.Context) *auth.Principal {
	p, _ := c.Get(principalKey)
	pr, _ := p.(*auth.Principal)
	return pr
}

// withActor puts the caller and the interface (REST, or the web UI when it says so with
// X-Agentdesk-Client: web) in the request's context, for the activity trail.
func withActor(c *gin.Context, p *auth.Principal) {
	ctx := audit.WithPrincipal(c.Request.Context(), p)
	c.Request = c.Request.WithContext(audit.WithVia(ctx, audit.ViaFor(audit.ViaREST, c.GetHeader(audit.ClientHeader))))
}

// bearerToken extracts the token of an "Authorization: Bearer" header.
func bearerToken(c *gin.Context) (string, error) {
	h := c.GetHeader("Authorization")
	if h == "" {
		return "", errs.Unauth("missing credentials: send Authorization: Bearer <token>")
	}
	scheme, token, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", errs.Unauth("the Authorization header must be \"Bearer <token>\"")
	}
	return strings.TrimSpace(token), nil
}

// requireBearer authenticates the request by its platform or data token.
func requireBearer(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		token, err := bearerToken(c)
		if err != nil {
			fail(c, err)
			return
		}
		p, err := svc.AuthenticateToken(c.Request.Context(), token)
		if err != nil {
			fail(c, err)
			return
		}
		c.Set(principalKey, p)
		withActor(c, p)
		c.Next()
	}
}

// Agent headers, as the spec names them.
const (
	HeaderTaskAuthorization = "X-Task-Authorization"
	HeaderTaskNamespace     = "X-Task-Namespace"
	HeaderAgentName         = "X-Agent-Name"
)

// requireCaller authenticates a user by Bearer token, or an agent by its headers with
// the project id taken from the path's {projectId}. Routes that take the project from
// the body (the agent callback) authenticate agents themselves.
func requireCaller(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		var p *auth.Principal
		var err error
		if c.GetHeader("Authorization") == "" && c.GetHeader(HeaderTaskAuthorization) != "" {
			p, err = svc.AuthenticateAgent(c.Request.Context(), c.Param("projectId"),
				c.GetHeader(HeaderTaskAuthorization), c.GetHeader(HeaderAgentName))
		} else {
			var token string
			if token, err = bearerToken(c); err == nil {
				p, err = svc.AuthenticateToken(c.Request.Context(), token)
			}
		}
		if err != nil {
			fail(c, err)
			return
		}
		c.Set(principalKey, p)
		withActor(c, p)
		c.Next()
	}
}

// pathProject checks that the {projectId} of the path is the caller's project. Another
// project answers 404, as if it did not exist.
func pathProject(c *gin.Context) error {
	if id := c.Param("projectId"); id != principal(c).ProjectID {
		return errs.Missing("project %s not found", quoted(id))
	}
	return nil
}
