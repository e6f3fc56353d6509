package api

import (
	"bytes"
	"io"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/a2a"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/service"
)

// a2aRoutes serves every agent as an A2A agent (docs/a2a.md): its Agent Card, public as
// A2A discovery wants it, and its JSON-RPC endpoint, for platform tokens of the project
// of the path.
func a2aRoutes(r *gin.Engine, svc *service.Service, hub *events.Hub) {
	r.GET("/a2a/:projectId/:agentName/.well-known/agent-card.json", func(c *gin.Context) {
		endpoint := c.Request.URL.Scheme + "://" + c.Request.Host + "/a2a/" + c.Param("projectId") + "/" + c.Param("agentName")
		card, err := a2a.CardHandler(c.Request.Context(), svc, c.Param("projectId"), c.Param("agentName"), endpoint)
		if err != nil {
			fail(c, err)
			return
		}
		card.ServeHTTP(c.Writer, c.Request)
	})
	r.POST("/a2a/:projectId/:agentName", requireA2ACaller(svc), requirePathProject, func(c *gin.Context) {
		if _, _, err := svc.A2AAgent(c.Request.Context(), c.Param("projectId"), c.Param("agentName")); err != nil {
			fail(c, err) // no such agent: 404 before any JSON-RPC
			return
		}
		body, err := readBody(c, MaxJSONBody)
		if err != nil {
			fail(c, err)
			return
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		c.Header("Content-Type", "application/json") // the SDK leaves it unset; SSE answers set their own
		a2a.RPCHandler(svc, hub, principal(c), c.Param("agentName")).ServeHTTP(c.Writer, c.Request)
	})
}

// requireA2ACaller authenticates a JSON-RPC request by its Bearer token alone (the Agent
// Card's one security scheme): like /mcp it never takes the browser's session cookie,
// so a page of another site cannot act through a visitor.
func requireA2ACaller(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := svc.Authenticate(c.Request.Context(), service.Credentials{Where: service.WhereREST,
			Authorization: c.GetHeader("Authorization"), Address: service.ClientAddress(c.Request.Context())})
		if err != nil {
			fail(c, err)
			return
		}
		c.Set(principalKey, p)
		c.Next()
	}
}
