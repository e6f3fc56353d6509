package graphql

import (
	"context"
	"strconv"
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Activity: the audit trail of every change, and the hooks by which the platform
// domains (skills, jobs, billing, activity) join the schema and the request context.

// platformContext adds to a request's context what the platform domains need: the
// per-request loader of agents' skills, and the interface of the activity trail on the
// principal (GraphQL, or the web UI when it sends X-Agentdesk-Client: web); the service
// stamps the principal as the actor of what it changes.
func platformContext(ctx context.Context, clientHeader string, svc *service.Service, pr *auth.Principal, cache bool) context.Context {
	// Authenticate said graphql; only an HTTP request of the web UI says otherwise, and its
	// principal is its own. (A WebSocket's principal, shared by its operations, is never
	// written: its client header is "".)
	if via := audit.ViaFor(audit.ViaGraphQL, clientHeader); pr.Via != via {
		pr.Via = via
	}
	return withSkillLoader(ctx, svc, pr, cache)
}

// platformQueries adds the queries of skills, jobs, billing and activity.
func (b builder) platformQueries(f gql.Fields) gql.Fields {
	b.skillQueries(f)
	b.jobQueries(f)
	b.billingQueries(f)
	b.activityQueries(f)
	b.webhookQueries(f) // webhooks.go
	b.mailQueries(f)    // mail.go
	b.a2aQueries(f)     // a2a.go
	return f
}

// platformMutations adds their mutations.
func (b builder) platformMutations(f gql.Fields) gql.Fields {
	b.skillMutations(f)
	b.jobMutations(f)
	b.billingMutations(f)
	b.webhookMutations(f) // webhooks.go
	b.a2aMutations(f)     // a2a.go
	return f
}

var activityType = gql.NewObject(gql.ObjectConfig{Name: "ActivityEntry", Description: "One change in the project: who made it, through which interface, to which object, when.", Fields: gql.Fields{
	"id":         &gql.Field{Type: nnInt, Resolve: field(func(a model.Activity) any { return a.ID })},
	"at":         timeField("When", func(a model.Activity) time.Time { return a.At }, false),
	"actorKind":  &gql.Field{Type: nnString, Description: "token (a token or a user's session), owner (the CLI, the desktop window), agent, job or system.", Resolve: field(func(a model.Activity) any { return a.ActorKind })},
	"actor":      &gql.Field{Type: nnString, Description: "The token's, agent's or job's name, or owner.", Resolve: field(func(a model.Activity) any { return a.Actor })},
	"via":        &gql.Field{Type: nnString, Description: "rest, graphql, ui (the web UI), cli, job (the scheduler) or internal.", Resolve: field(func(a model.Activity) any { return a.Via })},
	"action":     &gql.Field{Type: nnString, Description: "What happened: the event type, e.g. task.created, skill.deleted, job.ran.", Resolve: field(func(a model.Activity) any { return a.Action })},
	"objectType": &gql.Field{Type: nnString, Description: "task, agent, skill, job, budget, conversation, message, member, ...", Resolve: field(func(a model.Activity) any { return a.ObjectType })},
	"objectId":   &gql.Field{Type: nnString, Description: "The object's id (empty when the change has none).", Resolve: field(func(a model.Activity) any { return a.ObjectID })},
	"change": &gql.Field{Type: nnString, Description: "What a task change changed, in words (\"status Todo → Doing; agent worker → nobody\"), while the event log holds the change and the task's event before it (7 days by default); empty otherwise.",
		Resolve: field(func(a model.Activity) any { return a.Change })},
	"eventSeq": &gql.Field{Type: nnInt, Description: "The seq of the event the change sent on the stream.", Resolve: field(func(a model.Activity) any { return a.EventSeq })},
}})

func optTime(args map[string]any, name string) (*time.Time, error) {
	s := optString(args, name)
	if s == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil, errs.Invalid("%s %s is not an RFC 3339 time", name, strconv.Quote(*s))
	}
	return &t, nil
}

func (b builder) activityQueries(f gql.Fields) {
	svc := b.svc
	f["activity"] = &gql.Field{Type: listOf(activityType), Description: "The project's activity, newest first (admin): every change through every interface. Page with first and before; filter by object, actor, interface and time.",
		Args: gql.FieldConfigArgument{
			"first":      {Type: gql.Int, Description: "At most this many entries, 1 to 1000 (default 100)."},
			"before":     {Type: gql.Int, Description: "Only entries older than this entry id (the last id of the previous page)."},
			"objectType": {Type: gql.String, Description: "e.g. task, agent, skill, job."},
			"objectId":   {Type: gql.String},
			"actor":      {Type: gql.String, Description: "A token's, agent's or job's name, or owner."},
			"via":        {Type: gql.String, Description: "rest, graphql, ui, cli, job or internal."},
			"since":      {Type: gql.String, Description: "Only entries at or after this time (RFC 3339)."},
			"until":      {Type: gql.String, Description: "Only entries before this time (RFC 3339)."},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			first, before := firstBefore(p.Args)
			in := service.ActivityInput{ObjectType: argString(p.Args, "objectType"), ObjectID: argString(p.Args, "objectId"),
				Actor: argString(p.Args, "actor"), Via: argString(p.Args, "via"), Before: before, Limit: first}
			var err error
			if in.Since, err = optTime(p.Args, "since"); err != nil {
				return nil, err
			}
			if in.Until, err = optTime(p.Args, "until"); err != nil {
				return nil, err
			}
			return svc.Activity(p.Context, pr, in)
		})}
}
