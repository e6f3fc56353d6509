package api

import (
	_ "embed"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/graphql"
	"github.com/agentdesk/agentdesk/backend/mcp"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/docs"
)

//go:embed openapi.json
var openAPIDocument []byte

// openAPIGzip is the document gzipped, made on first use (about 160 KB raw).
var openAPIGzip = sync.OnceValue(func() []byte { return gzipBytes(openAPIDocument) })

// OpenAPIDocument is the OpenAPI 3.1 description of every REST endpoint.
func OpenAPIDocument() []byte { return openAPIDocument }

// NewRouter builds the whole HTTP interface: every route, in one block. The Router
// answers HEAD on every GET route and gzips text answers (http.go, gzip.go).
// trustedProxies (--trusted-proxies) are the reverse proxies whose X-Forwarded-For and
// X-Forwarded-Proto are believed; none: the peer is the client.
func NewRouter(svc *service.Service, hub *events.Hub, allowedOrigins []string, trustedProxies ...netip.Prefix) *Router {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// ClientIP: the peer, or from a trusted proxy the rightmost X-Forwarded-For address
	// that is not itself a trusted proxy (X-Real-IP is not read).
	r.RemoteIPHeaders = []string{"X-Forwarded-For"}
	var cidrs []string
	for _, p := range trustedProxies {
		cidrs = append(cidrs, p.String())
	}
	if err := r.SetTrustedProxies(cidrs); err != nil {
		panic("trusted proxies: " + err.Error()) // parsed prefixes: cannot happen
	}
	rt := &Router{Engine: r}
	r.Use(rt.observeRequests, clientAddress(trustedProxies), logRequests, recoverPanics)
	// A known path with a method it lacks: 405 with Allow, in the error envelope.
	r.HandleMethodNotAllowed = true
	r.NoMethod(methodNotAllowed(r.Routes))
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false

	r.GET("/healthz", health(svc))
	r.GET("/licenses", func(c *gin.Context) { // the About screen links it; no credential
		c.Header("X-Content-Type-Options", "nosniff")
		c.Data(http.StatusOK, "text/plain; charset=utf-8", docs.Licenses)
	})
	r.GET("/api/openapi.json", func(c *gin.Context) {
		c.Data(http.StatusOK, "application/json", precompressed(c.Writer, c.Request, openAPIDocument, openAPIGzip))
	})

	tasks := tasksHandler{svc, newTaskCache()}
	bearer := r.Group("/api", requireCaller(svc))
	bearer.GET("/tasks", handle(tasks.list))
	bearer.POST("/tasks", handle(tasks.create))
	bearer.DELETE("/tasks/done", handle(tasks.deleteDone))
	bearer.GET("/tasks/counts", handle(tasks.counts))
	bearer.GET("/tasks/:id", handle(tasks.get))
	bearer.DELETE("/tasks/:id", handle(tasks.delete))
	bearer.PATCH("/tasks/:id", handle(tasks.edit))
	bearer.PUT("/tasks/:id/status", handle(tasks.setStatus))
	bearer.PUT("/tasks/:id/agent", handle(tasks.setAgent))
	bearer.PUT("/tasks/:id/steps/:stepNum/status", handle(tasks.setStepStatus))
	bearer.POST("/tasks/:id/respond", handle(tasks.respond))
	bearer.POST("/tasks/:id/comments", handle(tasks.comment))
	bearer.GET("/backup", backup(svc)) // backup.go
	bearer.GET("/about", about(svc))
	bearer.GET("/search", handle(search(svc))) // search.go
	bearer.GET("/waiting-for", handle(tasks.waitingFor))
	r.GET("/api/me", requireAnyCredential(svc), me(svc)) // team.go
	r.GET("/api/signin", signInOptions(svc))             // team.go: no credential
	// A browser session started with a token, and a person's own sessions in team mode
	// (sessions.go).
	sessions := sessionsHandler{svc}
	r.POST("/api/session", requireCaller(svc), handle(sessions.start))
	r.GET("/api/me/sessions", requireCaller(svc), handle(sessions.list))
	r.DELETE("/api/me/sessions", requireCaller(svc), handle(sessions.endAll))
	r.DELETE("/api/me/sessions/:sessionId", requireCaller(svc), handle(sessions.end))

	// Signing out ends any session; signing in with OpenID Connect (team.go) is there
	// only when configured.
	team := newTeamHandler(svc)
	r.POST("/logout", requireCaller(svc), handle(team.logout))
	if svc.OIDC().Enabled() {
		r.GET("/login", team.login)
		r.GET("/auth/callback", team.callback)
	}

	// The page a question's email links to: the token in the path is the credential,
	// and only its POST answers (mailpage.go).
	r.GET("/mail/:token", mailPage(svc))
	r.POST("/mail/:token", mailAnswer(svc))

	// The event stream authenticates itself: tokens may come in the query for browsers.
	eventsUpgrader := events.Upgrader(allowedOrigins)
	eventsUpgrader.Error = handshakeRefused // events.go
	r.GET("/api/events", streamEvents(svc, hub, eventsUpgrader))

	// The agent callback authenticates the agent itself: its project is in the body.
	r.POST("/api/agent_callback/:id", handle(tasks.agentCallback))

	// Project-scoped routes: users with a token, or agents with their headers, in the
	// project of the path.
	project := r.Group("/api/projects/:projectId", requireCaller(svc), requirePathProject)
	project.GET("/tasks", handle(tasks.list))
	project.POST("/tasks", handle(tasks.create)) // agents create tasks here (MCP's create_task, ask_human)
	project.GET("/tasks/counts", handle(tasks.counts))
	project.GET("/tasks/:id", handle(tasks.get))

	// Conversations REST (users with a token, or agents with their headers). Every
	// {conversationId} is the integer id or the uuid.
	conv := conversationsHandler{svc}
	project.POST("/conversations", handle(conv.create))
	project.GET("/conversations", handle(conv.list))
	project.GET("/conversations/:conversationId", handle(conv.get))
	project.POST("/conversations/:conversationId/messages", handle(conv.postMessage))
	project.GET("/conversations/:conversationId/messages", handle(conv.listMessages))
	project.PUT("/conversations/:conversationId/read", handle(conv.markRead))
	project.GET("/conversations/:conversationId/tasks", handle(conv.tasks))
	project.POST("/conversations/:conversationId/documents", handle(conv.uploadDocument))
	project.GET("/conversations/:conversationId/documents", handle(conv.listDocuments))
	project.GET("/conversations/:conversationId/documents/:docId", handle(conv.downloadDocument))
	project.GET("/mentions", handle(conv.mentions)) // mentions.go

	// Knowledge bases, for data tokens only (vector.go).
	vectorRoutes(r, svc)

	// Same Bearer tokens as REST; subscriptions over WebSocket with the stream's origin check.
	// Browsers get the UI build's GraphiQL page when the binary has it (ui.go).
	gqlOpts := []graphql.Option{graphql.WithEvents(hub, events.Upgrader(allowedOrigins))}
	if page := graphiqlPage(); page != nil {
		gqlOpts = append(gqlOpts, graphql.WithPage(page))
	}
	// Every method reaches the handler, which answers those it does not take with 405 and
	// GraphQL's errors, as GraphQL over HTTP asks (not the REST envelope).
	r.Match([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}, "/graphql",
		gin.WrapH(graphql.Handler(svc, graphqlToken, gqlOpts...)))

	// MCP's Streamable HTTP transport (mcp.go): its tools call these routes in-process.
	r.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, "/mcp", requireMCPCaller(svc), gin.WrapH(mcp.NewHTTP(r, hub)))

	// A2A: every agent is an A2A agent (a2a.go).
	a2aRoutes(r, svc, hub)

	r.NoRoute(func(c *gin.Context) {
		if strings.HasPrefix(c.Request.URL.Path, "/api/") || c.Request.URL.Path == "/api" {
			fail(c, errs.Missing("no endpoint %s %s; /api/openapi.json lists them all", c.Request.Method, c.Request.URL.Path))
			return
		}
		if c.Request.URL.Path == "/metrics" { // a scraper pointed at the wrong port: no UI page
			c.String(http.StatusNotFound, "404: metrics are served on a listener of their own, --metrics-addr HOST:PORT (docs/metrics.md), not on this port\n")
			return
		}
		if serveUI(c) { // the web UI (ui.go)
			return
		}
		c.String(http.StatusNotFound, "404 page not found\n")
	})
	return rt
}

// graphqlToken takes the Bearer token of a /graphql request (its Authorization header),
// by the service's one reading of the header.
func graphqlToken(r *http.Request) (string, error) {
	return service.BearerToken(r.Header.Get("Authorization"))
}

// requirePathProject refuses a {projectId} other than the caller's project (pathProject).
func requirePathProject(c *gin.Context) {
	if err := pathProject(c); err != nil {
		fail(c, err)
		return
	}
	c.Next()
}

// health answers GET /healthz: 200 while the database answers; 200 "degraded" while
// its disk is full (reads work, writes get 507 until space is freed, and no restart is
// needed, so an orchestrator should not restart it or take its reads away); 503 when it
// cannot answer or its writer stopped after a failed fsync (an operator must act).
func health(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		st := svc.Store()
		if err := st.Ping(c.Request.Context()); err != nil {
			slog.Error("health check", "err", err)
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable"})
			return
		}
		if st.DiskFull() {
			c.JSON(http.StatusOK, gin.H{"status": "degraded",
				"reason": "the disk holding the database is full: writes fail with 507 until space is freed; reads work"})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	}
}

// clientAddress puts the request's client address (gin's ClientIP: the peer, or behind
// a trusted proxy the client of X-Forwarded-For) in its context, for every later use,
// and its scheme in the URL: X-Forwarded-Proto from a trusted proxy, else the
// connection's own.
func clientAddress(trusted []netip.Prefix) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Request.URL.Scheme = "http"
		if c.Request.TLS != nil {
			c.Request.URL.Scheme = "https"
		}
		if proto := strings.ToLower(strings.TrimSpace(c.GetHeader("X-Forwarded-Proto"))); proto == "http" || proto == "https" {
			if peer, err := netip.ParseAddr(c.RemoteIP()); err == nil && slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(peer.Unmap()) }) {
				c.Request.URL.Scheme = proto
			}
		}
		c.Request = c.Request.WithContext(service.WithClientAddress(c.Request.Context(), c.ClientIP()))
		c.Next()
	}
}

// logRequests writes one structured line per request, at DEBUG: at INFO one person's
// use would fill the log (failures are logged as errors anyway; --log-level debug shows
// them all). It logs the path only: query strings may carry credentials
// (access_token), and headers are never logged.
func logRequests(c *gin.Context) {
	if !slog.Default().Enabled(c.Request.Context(), slog.LevelDebug) {
		c.Next()
		return
	}
	start := time.Now()
	c.Next()
	slog.LogAttrs(c.Request.Context(), slog.LevelDebug, "request",
		slog.String("method", requestMethod(c.Request)),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", c.Writer.Status()),
		slog.Float64("ms", float64(time.Since(start).Microseconds())/1000),
		slog.Int("bytes", max(c.Writer.Size(), 0)),
		slog.String("remote", service.ClientAddress(c.Request.Context())),
		slog.String("scheme", c.Request.URL.Scheme),
	)
}

// RequestObserver is told of each answered request: its method, route template (gin's
// FullPath, "" when no route matched), status and duration, and whether it became a
// WebSocket (the metrics, backend/metrics).
type RequestObserver func(method, route string, status int, took time.Duration, upgraded bool)

// ObserveRequests sets the router's RequestObserver; call it before serving.
func (r *Router) ObserveRequests(fn RequestObserver) { r.observe = fn }

func (r *Router) observeRequests(c *gin.Context) {
	if r.observe == nil {
		c.Next()
		return
	}
	start := time.Now()
	c.Next()
	r.observe(requestMethod(c.Request), c.FullPath(), c.Writer.Status(), time.Since(start), c.IsWebsocket())
}

// recoverPanics turns a panic in a handler into a 500 in the error envelope.
func recoverPanics(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			slog.Error("handler panicked", "path", c.Request.URL.Path, "panic", r, "stack", string(debug.Stack()))
			fail(c, fmt.Errorf("handler panicked: %v", r))
		}
	}()
	c.Next()
}
