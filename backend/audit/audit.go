// Package audit names who made a change, and through which interface (Actor). The
// service passes the actor of each write to the store (store.Author), which records it
// in every event row the write appends (the activity trail is filled from them): the
// principal's, or the service's own (service.Options.Actor). Nothing of it travels in a
// context, but one mark: the background runner's reads are left out of the store's
// count of reads (WithVia, ViaOf).
package audit

import (
	"context"
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

// System is the actor of a change no principal asked for.
var System = Actor{Kind: KindSystem, Name: "system", Via: ViaInternal}

// Actor is who made a change and how.
type Actor struct {
	Kind string // token, owner, agent, job or system
	Name string
	Via  string
}

// ViaOf is the interface WithVia gave ctx, or "".
func ViaOf(ctx context.Context) string {
	v, _ := ctx.Value(viaKey{}).(string)
	return v
}
