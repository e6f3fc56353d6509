package api

import (
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

// Agent headers, as the spec names them.
const (
	HeaderTaskAuthorization = "X-Task-Authorization"
	HeaderTaskNamespace     = "X-Task-Namespace"
	HeaderAgentName         = "X-Agent-Name"
)

// credentials reads what a request presents, for Service.Authenticate to decide: the
// Authorization header, the agent headers with the path's {projectId} (if any), the
// web UI's client header, and in team mode the session cookie.
func credentials(svc *service.Service, c *gin.Context, where service.Where) service.Credentials {
	creds := service.Credentials{Where: where, Authorization: c.GetHeader("Authorization"),
		AgentDigest: c.GetHeader(HeaderTaskAuthorization), AgentName: c.GetHeader(HeaderAgentName),
		ProjectID: c.Param("projectId"), Client: c.GetHeader(audit.ClientHeader),
		Address: service.ClientAddress(c.Request.Context())}
	svc.ReadSession(&creds, c.Request)
	return creds
}

// authenticate is the middleware of the routes that authenticate at where.
func authenticate(svc *service.Service, where service.Where) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := svc.Authenticate(c.Request.Context(), credentials(svc, c, where))
		if err != nil {
			fail(c, err)
			return
		}
		c.Set(principalKey, p) // the service stamps it as the actor of what it changes
		c.Next()
	}
}

// requireCaller authenticates the REST routes: a user by token (or session), or an
// agent by its headers for the project in the path (routes without a project in the
// path have none to give, so agents are refused there).
func requireCaller(svc *service.Service) gin.HandlerFunc { return authenticate(svc, service.WhereREST) }

// pathProject checks that the {projectId} of the path is the caller's project. Another
// project answers 404, as if it did not exist.
func pathProject(c *gin.Context) error {
	if id := c.Param("projectId"); id != principal(c).ProjectID {
		return errs.Missing("project %s not found", quoted(id))
	}
	return nil
}
