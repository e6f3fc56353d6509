package mcp

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/service"
)

// WithPrincipal is the context of a /mcp request that authenticated as p.
func WithPrincipal(ctx context.Context, p *auth.Principal) context.Context {
	return auth.NewContext(ctx, p)
}

func principalOf(ctx context.Context) *auth.Principal { return auth.FromContext(ctx) }

// SessionIdle is how long a /mcp session lives without a request.
const SessionIdle = 30 * time.Minute

// HTTP serves MCP's Streamable HTTP transport at /mcp. Each request must come through
// the route's authentication (WithPrincipal). Each session gets its own server, for its
// caller; its tools call rest, the server's own REST handler, in-process with the
// credentials the session began with, and a session answers only to that caller.
type HTTP struct {
	rest    http.Handler
	hub     *events.Hub
	handler *mcp.StreamableHTTPHandler

	mu     sync.Mutex
	owners map[string]string // session id -> the caller it belongs to (callerKey)
}

// NewHTTP returns the /mcp handler.
func NewHTTP(rest http.Handler, hub *events.Hub) *HTTP {
	h := &HTTP{rest: rest, hub: hub, owners: map[string]string{}}
	// The route authenticates every request; agentdesk's own origin and Host checks
	// apply to browsers, and bearer credentials are not sent by pages of other sites.
	h.handler = mcp.NewStreamableHTTPHandler(h.newSession, &mcp.StreamableHTTPOptions{SessionTimeout: SessionIdle})
	return h
}

// callerKey names who a principal is, to bind sessions to it.
func callerKey(p *auth.Principal) string {
	return fmt.Sprintf("%s/%s/%d/%d/%d", p.Kind, p.ProjectID, p.TokenID, p.AgentID, p.UserID)
}

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	if p == nil {
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		h.mu.Lock()
		owner, known := h.owners[id]
		h.mu.Unlock()
		if known && owner != callerKey(p) { // another caller's session: as if it did not exist
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
	}
	h.handler.ServeHTTP(w, r)
}

// newSession makes the server of a new session, for the caller of its first request.
func (h *HTTP) newSession(r *http.Request) *mcp.Server {
	p := principalOf(r.Context())
	if p == nil {
		return nil
	}
	api := client.New("http://agentdesk.internal", forwardCredentials(r, p),
		client.WithHTTPClient(&http.Client{Transport: inProcess{h.rest, r.RemoteAddr}}))
	key := callerKey(p)
	var id string
	return NewServer(Config{API: api, Caller: CallerOf(p), Changes: HubChanges(h.hub, p),
		SessionID: func() string {
			id = rand.Text()
			h.mu.Lock()
			h.owners[id] = key
			h.mu.Unlock()
			return id
		},
		OnClose: func() {
			h.mu.Lock()
			delete(h.owners, id)
			h.mu.Unlock()
		}})
}

// forwardCredentials are the credentials the request presented, for the tools' REST calls.
func forwardCredentials(r *http.Request, p *auth.Principal) client.Option {
	if p.Kind == auth.KindAgent {
		return client.WithAgent(p.ProjectID, r.Header.Get("X-Task-Authorization"), r.Header.Get("X-Agent-Name"), r.Header.Get("X-Task-Namespace"))
	}
	token, _ := service.BearerToken(r.Header.Get("Authorization")) // it authenticated
	return client.WithToken(token)
}

// inProcess sends a request to the REST handler in this process, from the address of
// the MCP client (what REST logs and limits by).
type inProcess struct {
	rest       http.Handler
	remoteAddr string
}

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	r.RemoteAddr = t.remoteAddr
	rec := httptest.NewRecorder()
	t.rest.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// HubChanges is a Changes over the server's event hub, as p: it ends when p's credential does.
func HubChanges(hub *events.Hub, p *auth.Principal) Changes {
	return func(ctx context.Context) (<-chan int64, error) { return hub.TaskChanges(ctx, p) }
}
