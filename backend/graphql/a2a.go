package graphql

import (
	"github.com/a2aproject/a2a-go/a2a"
	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Remote A2A agents: register one by its Agent Card URL (admin), list them with their
// cards. The credential given at registration is never shown again.

var agentSkillType = gql.NewObject(gql.ObjectConfig{Name: "AgentCardSkill", Description: "A skill an Agent Card lists.", Fields: gql.Fields{
	"id":          &gql.Field{Type: nnString, Resolve: field(func(s a2a.AgentSkill) any { return s.ID })},
	"name":        &gql.Field{Type: nnString, Resolve: field(func(s a2a.AgentSkill) any { return s.Name })},
	"description": &gql.Field{Type: nnString, Resolve: field(func(s a2a.AgentSkill) any { return s.Description })},
}})

var remoteAgentType = gql.NewObject(gql.ObjectConfig{Name: "RemoteAgent", Description: "A remote A2A agent of the project: an agent (tasks are assigned to it as to any) whose tasks agentdesk sends it, by its Agent Card.", Fields: gql.Fields{
	"agent":           &gql.Field{Type: gql.NewNonNull(agentType), Resolve: field(func(r service.RemoteAgent) any { return *r.Agent })},
	"cardUrl":         &gql.Field{Type: nnString, Description: "Where its Agent Card was fetched.", Resolve: field(func(r service.RemoteAgent) any { return r.CardURL })},
	"name":            &gql.Field{Type: nnString, Description: "The card's name.", Resolve: field(func(r service.RemoteAgent) any { return r.Card.Name })},
	"description":     &gql.Field{Type: nnString, Description: "The card's description.", Resolve: field(func(r service.RemoteAgent) any { return r.Card.Description })},
	"url":             &gql.Field{Type: nnString, Description: "The agent's A2A endpoint, from its card.", Resolve: field(func(r service.RemoteAgent) any { return r.Card.URL })},
	"protocolVersion": &gql.Field{Type: nnString, Resolve: field(func(r service.RemoteAgent) any { return r.Card.ProtocolVersion })},
	"streaming":       &gql.Field{Type: nnBool, Description: "It streams (message/stream); else agentdesk sends with message/send and asks for the task's state.", Resolve: field(func(r service.RemoteAgent) any { return r.Card.Capabilities.Streaming })},
	"skills":          &gql.Field{Type: listOf(agentSkillType), Resolve: field(func(r service.RemoteAgent) any { return r.Card.Skills })},
	"credentialKind":  &gql.Field{Type: nnString, Description: "What agentdesk sends it: bearer, apikey, or empty for nothing. The credential itself is never shown.", Resolve: field(func(r service.RemoteAgent) any { return r.CredentialKind })},
}})

func (b builder) a2aQueries(f gql.Fields) {
	svc := b.svc
	f["remoteAgents"] = &gql.Field{Type: listOf(remoteAgentType), Description: "The project's remote A2A agents, with their Agent Cards (task:read).",
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.RemoteAgents(p.Context, pr)
		})}
}

func (b builder) a2aMutations(f gql.Fields) {
	svc := b.svc
	f["registerRemoteAgent"] = &gql.Field{Type: gql.NewNonNull(remoteAgentType), Description: "Registers a remote A2A agent by its Agent Card URL (admin): the card is fetched (http or https, on the public internet unless the server runs with --webhooks-allow-private) and the agent joins the project under name; tasks assigned to it are sent to it. The credential is stored to be sent to it, and never shown again.",
		Args: gql.FieldConfigArgument{
			"name":           {Type: nnString, Description: "Its name in the project (as an agent's)."},
			"cardUrl":        {Type: nnString, Description: "The Agent Card's URL, e.g. https://agent.example/.well-known/agent-card.json."},
			"credentialKind": {Type: gql.String, Description: "bearer (Authorization: Bearer) or apikey (the header its card's apiKey scheme names); left out: none."},
			"credential":     {Type: gql.String, Description: "The token or key agentdesk sends it."},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			in := service.RemoteAgentInput{Name: argString(p.Args, "name"), CardURL: argString(p.Args, "cardUrl")}
			if v := optString(p.Args, "credentialKind"); v != nil {
				in.CredentialKind = *v
			}
			if v := optString(p.Args, "credential"); v != nil {
				in.Credential = *v
			}
			return svc.RegisterRemoteAgent(p.Context, pr, in)
		})}
}
