package mcp

import (
	"context"
	"errors"
	"slices"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
)

// Caller is who a session's credentials are: what decides which tools it lists.
type Caller struct {
	ProjectID string
	Agent     bool  // an agent, by its project's headers
	AgentID   int64 // Agent: its id, for the tasks it gives itself
	Scopes    []string
}

func (c Caller) has(scopes ...string) bool {
	for _, s := range scopes {
		if !slices.Contains(c.Scopes, s) {
			return false
		}
	}
	return true
}

// CallerOf is the Caller of a principal (the server's /mcp).
func CallerOf(p *auth.Principal) Caller {
	return Caller{ProjectID: p.ProjectID, Agent: p.Kind == auth.KindAgent, AgentID: p.AgentID, Scopes: p.Scopes}
}

// WhoAmI asks the server who api's credentials are (agentdesk mcp). A data token is
// refused on /api/me: its scopes are learnt from the knowledge bases it may list.
func WhoAmI(ctx context.Context, api *client.Client) (Caller, error) {
	me, err := api.Me(ctx)
	if err == nil {
		c := Caller{ProjectID: me.Project.ID, Scopes: me.Scopes}
		if me.Agent != nil {
			c.Agent, c.AgentID = true, me.Agent.ID
		}
		return c, nil
	}
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Code != "forbidden" {
		return Caller{}, err
	}
	if _, serr := api.Spaces(ctx); serr != nil {
		return Caller{}, err // not a data token either: the first refusal says why
	}
	return Caller{Scopes: []string{auth.VectorRead}}, nil
}
