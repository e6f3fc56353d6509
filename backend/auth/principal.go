package auth

import (
	"context"
	"slices"
	"strings"
)

// Scopes of platform tokens.
const (
	TaskRead       = "task:read"
	TaskWrite      = "task:write"
	MessagingRead  = "messaging:read"
	MessagingWrite = "messaging:write"
	Admin          = "admin"
)

// Scopes of data tokens.
const (
	VectorRead  = "vector:read"
	VectorWrite = "vector:write"
)

// PlatformScopes and DataScopes are the scopes each token type may carry.
var (
	PlatformScopes = []string{TaskRead, TaskWrite, MessagingRead, MessagingWrite, Admin}
	DataScopes     = []string{VectorRead, VectorWrite}
)

// Kind says how a caller authenticated.
type Kind string

const (
	KindToken Kind = "token" // a platform or data token (Bearer)
	KindOwner Kind = "owner" // the local owner: the CLI, the desktop window
	KindAgent Kind = "agent" // an agent, by its project's header digest
	KindUser  Kind = "user"  // a person, by the session cookie of an OpenID Connect sign-in
)

// Principal is an authenticated caller, bound to one project.
type Principal struct {
	Kind      Kind
	ProjectID string
	Name      string // token name, agent name or user name: who, for logs and audit
	TokenID   int64  // KindToken
	TokenType string // KindToken: platform or data
	// TokenMaker is the person who made the token (KindToken; 0 when none did): a token
	// the token makes is theirs too.
	TokenMaker int64
	AgentID    int64    // KindAgent
	Scopes     []string // what the caller may do; the owner holds every scope
	// Via is the interface the caller came through (audit's ViaREST, ViaGraphQL, ViaUI,
	// ViaJob...), set where it authenticated; "" for a principal made in code, which
	// acts for whoever its context says (the CLI's owner, or the system).
	Via string
	// What the caller authenticated with, so that a long-lived connection can check
	// that it still holds: the token's hash (KindToken), the digest presented (KindAgent).
	TokenHash   []byte
	AgentDigest string
	// KindUser: the person, their role in ProjectID, and their session (its hash, and
	// the CSRF token that cookie-authenticated changes must echo).
	UserID      int64
	Role        string
	SessionHash []byte
	CSRFToken   string
}

// Has reports whether the principal holds scope.
func (p *Principal) Has(scope string) bool {
	return p != nil && slices.Contains(p.Scopes, scope)
}

// Owner is the local owner acting on a project (CLI commands, the desktop window).
func Owner(projectID string) *Principal {
	return &Principal{Kind: KindOwner, ProjectID: projectID, Name: "owner",
		Scopes: append(slices.Clone(PlatformScopes), DataScopes...)}
}

// AgentScopes are what an agent may do in its project.
var AgentScopes = []string{TaskRead, TaskWrite, MessagingRead, MessagingWrite}

// Agent is an agent acting in its project.
func Agent(projectID string, agentID int64, name string) *Principal {
	return &Principal{Kind: KindAgent, ProjectID: projectID, AgentID: agentID, Name: name, Scopes: AgentScopes}
}

// SplitScopes splits a comma- or space-separated scope list, as the CLI takes it.
func SplitScopes(list string) []string {
	return strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' })
}

// CheckScopes checks that every scope is valid for the token type and returns them
// sorted and de-duplicated, or a sentence saying what is wrong.
func CheckScopes(tokenType string, scopes []string) ([]string, string) {
	allowed := PlatformScopes
	if tokenType == "data" {
		allowed = DataScopes
	}
	var out []string
	for _, s := range scopes {
		if !slices.Contains(allowed, s) {
			return nil, "unknown " + tokenType + " token scope " + quote(s) + "; valid scopes are " + strings.Join(allowed, ", ")
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, "a token needs at least one scope; valid scopes are " + strings.Join(allowed, ", ")
	}
	slices.Sort(out)
	return out, ""
}

func quote(s string) string { return "\"" + s + "\"" }

type principalKey struct{}

// NewContext returns ctx carrying p: the caller an interface's handlers act for (the
// GraphQL resolvers, the MCP tools), set once the request has authenticated.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext is the caller NewContext put in ctx, or nil.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
