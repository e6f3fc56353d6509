package a2a

import (
	"cmp"
	"context"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/version"
)

// ProtocolVersion is the A2A protocol version served: the one the a2a-go release in
// go.mod speaks (v0.3.x: A2A 0.3.0).
const ProtocolVersion = "0.3.0"

// bearerScheme names the card's one security scheme.
const bearerScheme a2a.SecuritySchemeName = "bearer"

// CardHandler serves the Agent Card of the agent named agentName in project projectID,
// whose JSON-RPC endpoint is at endpoint (an absolute URL). An unknown project or agent
// is the service's not-found error, for the caller to answer.
func CardHandler(ctx context.Context, svc *service.Service, projectID, agentName, endpoint string) (http.Handler, error) {
	agent, skills, err := svc.A2AAgent(ctx, projectID, agentName)
	if err != nil {
		return nil, err
	}
	card := cardOf(agent, skills, endpoint)
	return a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		return card, nil
	})), nil
}

// cardOf is an agent's Agent Card: its profile, its skills, where and how to call it.
func cardOf(agent *model.Agent, skills []model.Skill, endpoint string) *a2a.AgentCard {
	card := &a2a.AgentCard{
		Name: cmp.Or(agent.DisplayName, agent.Name),
		Description: cmp.Or(agent.Description, fmt.Sprintf("The agentdesk agent %q: a message becomes a task on its board; "+
			"when it needs a person, the task is input-required until someone answers.", agent.Name)),
		URL:                endpoint,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            version.Version,
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		SecuritySchemes: a2a.NamedSecuritySchemes{bearerScheme: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer",
			Description: "an agentdesk platform token (task:read to read tasks, task:write to send and cancel), as on its REST API"}},
		Security: []a2a.SecurityRequirements{{bearerScheme: a2a.SecuritySchemeScopes{}}},
		Skills:   make([]a2a.AgentSkill, 0, len(skills)),
	}
	for _, s := range skills {
		card.Skills = append(card.Skills, a2a.AgentSkill{ID: s.Name, Name: s.Name,
			Description: cmp.Or(s.Description, s.Name), Tags: []string{s.Name}})
	}
	return card
}
