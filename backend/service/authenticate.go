package service

import (
	"context"
	"strings"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Where is the place a request authenticates at. Which credentials each place takes is
// decided in Authenticate, and nowhere else.
type Where string

const (
	// WhereREST is /api outside /api/vector: platform tokens, agents (their headers
	// with the project of the path), and session cookies.
	WhereREST Where = "rest"
	// WhereVector is /api/vector: data tokens only.
	WhereVector Where = "vector"
	// WhereGraphQL is /graphql, over HTTP or WebSocket: platform tokens, and session
	// cookies over HTTP (POST with a JSON body only).
	WhereGraphQL Where = "graphql"
	// WhereEvents is /api/events: platform tokens (header or ?access_token=), agents
	// (their headers with ?project_id=), and session cookies.
	WhereEvents Where = "events"
	// WhereCallback is /api/agent_callback: agents only (the project from the body).
	WhereCallback Where = "callback"
)

// Credentials is what a request presents, as the interface read it from headers, query
// or payload. Authenticate decides which of them counts.
type Credentials struct {
	Where Where
	// Authorization is the Authorization header as sent: "Bearer <token>".
	Authorization string
	// Token is a token value sent outside the Authorization header: the event stream's
	// ?access_token= (browsers cannot set headers on a WebSocket), the connection_init
	// payload's "token" of GraphQL over WebSocket.
	Token string
	// The agent headers (X-Task-Authorization, X-Agent-Name) and the project they are
	// for: the path's {projectId}, the stream's ?project_id=, the callback's project_id.
	AgentDigest string
	AgentName   string
	ProjectID   string
	// Client is the X-Agentdesk-Client header: the web UI says "web", so that its changes
	// are recorded as made through the UI.
	Client string
	// Session is the session cookie's value: a team mode sign-in's (issue 18) or one
	// started with a token (POST /api/session); it counts only when no Authorization
	// header or token is sent. Project is the X-Agentdesk-Project header: the project a
	// person's session acts in (ProjectID, from the path, wins).
	Session string
	Project string
	// Address is the client's address (ClientAddress of the request): failures are
	// counted, and refused over the limit, per address (ratelimit.go).
	Address string
	// What a cookie-authenticated request must show (checkCookieRequest): the method,
	// the body's Content-Type, the X-CSRF-Token, Origin and Sec-Fetch-Site headers, and
	// the Host it was sent to (the server's origin when it has no public URL).
	Method, ContentType, CSRFToken, Origin, FetchSite, Host string
}

// Authenticate finds who is calling, for every interface: it reads the credential the
// request presents (Authorization header first, then a token given elsewhere, then the
// agent headers where agents may come, then the session cookie), checks it, and checks
// that it is accepted at c.Where; a cookie must also pass the CSRF rules
// (checkCookieRequest). Errors are unauthenticated (no, wrong, revoked or expired credentials) or
// forbidden (a valid credential of the wrong kind for the place), and say which.
//
// Refused credentials count against the client address's limit of failures
// (ratelimit.go): past it, a refused credential is answered rate_limited. A valid one
// is never refused for its address.
func (s *Service) Authenticate(ctx context.Context, c Credentials) (*auth.Principal, error) {
	p, err := s.credentialOf(ctx, c)
	if err != nil {
		if s.presents(c) && errs.CodeOf(err) == errs.Unauthenticated {
			return nil, s.limits.refuse(c.Address, s.clock(), err)
		}
		return nil, err
	}
	if err := admitted(c.Where, p); err != nil {
		return nil, err
	}
	if p.SessionHash != nil { // it came with the session cookie
		if err := s.checkCookieRequest(c, p); err != nil {
			return nil, err
		}
	}
	p.Via = audit.ViaFor(audit.ViaREST, c.Client)
	if c.Where == WhereGraphQL {
		p.Via = audit.ViaFor(audit.ViaGraphQL, c.Client)
	}
	return p, nil
}

// presents tells whether c carries a credential credentialOf checks (else it is
// refused for missing credentials).
func (s *Service) presents(c Credentials) bool {
	return c.Authorization != "" || c.Token != "" || (c.AgentDigest != "" && takesAgents(c.Where)) ||
		(c.Session != "" && takesSessions(c.Where))
}

// credentialOf authenticates the one credential of c that counts.
func (s *Service) credentialOf(ctx context.Context, c Credentials) (*auth.Principal, error) {
	switch {
	case c.Authorization != "":
		value, err := BearerToken(c.Authorization)
		if err != nil {
			return nil, err
		}
		return s.AuthenticateToken(ctx, value)
	case c.Token != "":
		return s.AuthenticateToken(ctx, c.Token)
	case c.AgentDigest != "" && takesAgents(c.Where):
		return s.agentPrincipal(ctx, c.ProjectID, c.AgentDigest, c.AgentName)
	case c.Session != "" && takesSessions(c.Where):
		project := c.ProjectID
		if project == "" {
			project = c.Project
		}
		return s.sessionPrincipal(ctx, c.Session, project)
	}
	return nil, errs.Unauth("%s", missingCredentials[c.Where])
}

// missingCredentials says, for each place, what to send.
var missingCredentials = map[Where]string{
	WhereREST:     "missing credentials: send Authorization: Bearer <token> (agents: X-Task-Authorization and X-Agent-Name on /api/projects/{projectId}/... paths)",
	WhereVector:   "missing credentials: send Authorization: Bearer <data token>",
	WhereGraphQL:  "missing credentials: send Authorization: Bearer <token> (over WebSocket: {\"Authorization\": \"Bearer <token>\"} in the connection_init payload)",
	WhereEvents:   "missing credentials: send Authorization: Bearer <token>, ?access_token=<token>, or the agent headers with ?project_id=",
	WhereCallback: "missing credentials: the agent callback takes the agent headers X-Task-Authorization and X-Agent-Name",
}

func takesAgents(w Where) bool { return w == WhereREST || w == WhereEvents || w == WhereCallback }

// takesSessions: a browser session works on REST, GraphQL and the event stream.
func takesSessions(w Where) bool { return w == WhereREST || w == WhereEvents || w == WhereGraphQL }

// admitted checks that a valid credential is of a kind the place takes: data tokens
// on /api/vector only, and nothing else there; only agents on the agent callback.
func admitted(w Where, p *auth.Principal) error {
	data := p.Kind == auth.KindToken && p.TokenType == model.TokenData
	switch {
	case w == WhereVector && !data:
		return errs.Forbid("the /api/vector endpoints accept data tokens only, and this is a %s token; create one with: agentdesk token create --type data --scopes vector:read,vector:write", p.TokenType)
	case w != WhereVector && data:
		return errs.Forbid("data tokens are accepted only by the /api/vector endpoints; use a platform token here (GraphQL's knowledge-base operations need one with the admin scope)")
	case w == WhereCallback && p.Kind != auth.KindAgent:
		return errs.Forbid("the agent callback is for agents: authenticate with X-Task-Authorization and X-Agent-Name, not a Bearer token")
	}
	return nil
}

// BearerToken takes the token out of an Authorization header value ("Bearer <token>").
func BearerToken(header string) (string, error) {
	if header == "" {
		return "", errs.Unauth("missing credentials: send Authorization: Bearer <token>")
	}
	scheme, token, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", errs.Unauth("the Authorization header must be \"Bearer <token>\"")
	}
	return strings.TrimSpace(token), nil
}

// author is who a change made for p is by, and the project it changes (store.Author),
// which every write takes as an argument: the store records the actor in each event of
// the write, and on PostgreSQL takes the project's lock before running it. The actor is
// the principal, through the interface it came by. A principal that came through no
// interface (Via "": made in code, by the CLI or a test), or none, is the service's own
// actor (Options.Actor: the system, or the local owner through the CLI).
func (s *Service) author(p *auth.Principal) store.Author {
	if p == nil {
		return store.Author{Actor: s.actor}
	}
	if p.Via == "" {
		return store.Author{Project: p.ProjectID, Actor: s.actor}
	}
	return store.Author{Project: p.ProjectID, Actor: audit.Actor{Kind: string(p.Kind), Name: p.Name, Via: p.Via}}
}
