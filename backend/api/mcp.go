package api

import (
	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/mcp"
	"github.com/agentdesk/agentdesk/backend/service"
)

// requireMCPCaller authenticates every /mcp request with the REST credentials: a
// platform token, an agent's headers with its project in X-Agentdesk-Project or
// ?project_id=, or a data token (which gets search_knowledge alone). Browser session
// cookies are not taken: MCP clients send a credential, and a page of another site
// must not be able to act through a visitor's cookie.
func requireMCPCaller(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		creds := service.Credentials{Where: service.WhereREST, Authorization: c.GetHeader("Authorization"),
			AgentDigest: c.GetHeader(HeaderTaskAuthorization), AgentName: c.GetHeader(HeaderAgentName),
			ProjectID: c.GetHeader("X-Agentdesk-Project"), Address: service.ClientAddress(c.Request.Context())}
		if creds.ProjectID == "" {
			creds.ProjectID = c.Query("project_id")
		}
		p, err := svc.Authenticate(c.Request.Context(), creds)
		if errs.CodeOf(err) == errs.Forbidden && creds.Authorization != "" { // a data token?
			creds.Where = service.WhereVector
			if dp, derr := svc.Authenticate(c.Request.Context(), creds); derr == nil {
				p, err = dp, nil
			}
		}
		if err != nil {
			fail(c, err)
			return
		}
		c.Request = c.Request.WithContext(mcp.WithPrincipal(c.Request.Context(), p))
		c.Next()
	}
}
