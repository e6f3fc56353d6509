// Package audit names who made a change, and through which interface (Actor). The
// service passes the actor of each write to the store (store.Author), which records it
// in every event row the write appends (the activity trail is filled from them). The
// context names the interface of a request (WithVia), and the actor of what the command
// line and the scheduler do without a principal of their own (From).
package audit

import (
	"context"

	"github.com/agentdesk/agentdesk/backend/auth"
)

// The interfaces a change can come through.
const (
	ViaREST     = "rest"
	ViaGraphQL  = "graphql"
	ViaUI       = "ui" // the web UI (it sends ClientHeader: web), over REST or GraphQL
	ViaCLI      = "cli"
	ViaJob      = "job"   // the job scheduler
	ViaEmail    = "email" // a link in an email (a question answered from its page)
	ViaInternal = "internal"
)

// ClientHeader is the request header by which the web UI says it is the caller
// (value ClientWeb); its changes are recorded as made through the UI.
const (
	ClientHeader = "X-Agentdesk-Client"
	ClientWeb    = "web"
)

// Actor kinds beyond the principal kinds (token, owner, agent).
const (
	KindJob    = "job"
	KindSystem = "system"
)

type viaKey struct{}
type principalKey struct{}

// WithVia records the interface a request came through.
func WithVia(ctx context.Context, via string) context.Context {
	return context.WithValue(ctx, viaKey{}, via)
}

// ViaFor is the interface of a REST or GraphQL request given its ClientHeader value.
func ViaFor(base, clientHeader string) string {
	if clientHeader == ClientWeb {
		return ViaUI
	}
	return base
}

// WithPrincipal records the caller a request acts for.
func WithPrincipal(ctx context.Context, p *auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// System is the actor of a change no principal asked for.
var System = Actor{Kind: KindSystem, Name: "system", Via: ViaInternal}

// Actor is who made a change and how.
type Actor struct {
	Kind string // token, owner, agent, job or system
	Name string
	Via  string
}

// From reads the actor of ctx; without one it is the system, through "internal". The
// interface is the principal's own (where it authenticated) when it has one, else the
// context's.
func From(ctx context.Context) Actor {
	a := System
	p, _ := ctx.Value(principalKey{}).(*auth.Principal)
	if p != nil {
		a.Kind, a.Name = string(p.Kind), p.Name
	}
	if v, _ := ctx.Value(viaKey{}).(string); v != "" {
		a.Via = v
	}
	if p != nil && p.Via != "" {
		a.Via = p.Via
	}
	return a
}
