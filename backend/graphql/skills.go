package graphql

import (
	"context"
	"sync"
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Skills: named capabilities of a project, attached to agents, required by tasks.

var skillType = gql.NewObject(gql.ObjectConfig{Name: "Skill", Description: "A named capability of the project. Agents have skills; a task may require some, and then only an agent with all of them may take it.", Fields: gql.Fields{
	"id":          &gql.Field{Type: nnInt, Resolve: field(func(s model.Skill) any { return s.ID })},
	"name":        &gql.Field{Type: nnString, Description: "Unique in the project, at most 64 characters.", Resolve: field(func(s model.Skill) any { return s.Name })},
	"description": &gql.Field{Type: nnString, Resolve: field(func(s model.Skill) any { return s.Description })},
	"createdAt":   timeField("When the skill was created", func(s model.Skill) time.Time { return s.CreatedAt }, false),
	"updatedAt":   timeField("When the skill last changed", func(s model.Skill) time.Time { return s.UpdatedAt }, false),
}})

func init() {
	// Fields the platform domains add to types defined in schema.go.
	agentType.AddFieldConfig("skills", &gql.Field{Type: listOf(skillType),
		Description: "The agent's skills, by name. Loaded once per request for every agent asked about, not once per agent.",
		Resolve:     agentSkills})
	taskType.AddFieldConfig("requiredSkills", &gql.Field{Type: listOf(gql.String),
		Description: "Names of the skills an assignee must have, sorted.",
		Resolve: field(func(t model.Task) any {
			if t.RequiredSkills == nil {
				return []string{}
			}
			return t.RequiredSkills
		})})
	taskType.AddFieldConfig("blockedReason", &gql.Field{Type: gql.String,
		Description: "Set only in the result of createTask (and on tasks made by jobs) when a rule kept an assigned task in Backlog instead of Todo: the project's monthly budget is spent.",
		Resolve: field(func(t model.Task) any {
			if t.BlockedReason == "" {
				return nil
			}
			return t.BlockedReason
		})})
}

// skillLoader loads every agent's skills once per request (one query, whatever the
// number of agents). A subscription's loader does not cache: each event loads afresh.
type skillLoader struct {
	svc   *service.Service
	pr    *auth.Principal
	cache bool

	mu sync.Mutex
	m  map[int64][]model.Skill
}

type skillLoaderKey struct{}

func withSkillLoader(ctx context.Context, svc *service.Service, pr *auth.Principal, cache bool) context.Context {
	return context.WithValue(ctx, skillLoaderKey{}, &skillLoader{svc: svc, pr: pr, cache: cache})
}

func (l *skillLoader) load(ctx context.Context) (map[int64][]model.Skill, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m != nil {
		return l.m, nil
	}
	m, err := l.svc.AgentSkills(ctx, l.pr)
	if err == nil && l.cache {
		l.m = m
	}
	return m, err
}

func agentSkills(p gql.ResolveParams) (any, error) {
	var a model.Agent
	switch s := p.Source.(type) {
	case model.Agent:
		a = s
	case *model.Agent:
		a = *s
	default:
		return nil, nil
	}
	l, _ := p.Context.Value(skillLoaderKey{}).(*skillLoader)
	if l == nil {
		return []model.Skill{}, nil
	}
	m, err := l.load(p.Context)
	if err != nil {
		return nil, publicError(p.Context, err)
	}
	if skills := m[a.ID]; skills != nil {
		return skills, nil
	}
	return []model.Skill{}, nil
}

func (b builder) skillQueries(f gql.Fields) {
	svc := b.svc
	f["skills"] = &gql.Field{Type: listOf(skillType), Description: "The project's skills, by name (task:read).",
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Skills(p.Context, pr)
		})}
}

func (b builder) skillMutations(f gql.Fields) {
	svc := b.svc
	f["createSkill"] = &gql.Field{Type: gql.NewNonNull(skillType), Description: "Adds a skill to the project (admin).",
		Args: gql.FieldConfigArgument{
			"name":        {Type: nnString, Description: "Unique in the project, 1 to 64 characters, no leading or trailing spaces."},
			"description": {Type: gql.String, Description: "What the skill is, at most 2000 characters."},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.CreateSkill(p.Context, pr, argString(p.Args, "name"), argString(p.Args, "description"))
		})}
	f["updateSkill"] = &gql.Field{Type: gql.NewNonNull(skillType), Description: "Renames a skill or changes its description (admin); arguments left out stay as they are.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}, "name": {Type: gql.String}, "description": {Type: gql.String}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.UpdateSkill(p.Context, pr, argInt64(p.Args, "id"), optString(p.Args, "name"), optString(p.Args, "description"))
		})}
	f["deleteSkill"] = &gql.Field{Type: nnBool, Description: "Deletes a skill (admin): agents lose it, tasks stop requiring it. True when done.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			if err := svc.DeleteSkill(p.Context, pr, argInt64(p.Args, "id")); err != nil {
				return nil, err
			}
			return true, nil
		})}
	attach := func(on bool) gql.FieldResolveFn {
		return resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			a, _, err := svc.SetAgentSkill(p.Context, pr, argInt64(p.Args, "agentId"), argInt64(p.Args, "skillId"), on)
			if err != nil {
				return nil, err
			}
			return *a, nil
		})
	}
	args := gql.FieldConfigArgument{"agentId": {Type: nnInt}, "skillId": {Type: nnInt}}
	f["attachSkill"] = &gql.Field{Type: gql.NewNonNull(agentType), Description: "Gives an agent a skill (admin); returns the agent. Attaching a skill it has changes nothing.", Args: args, Resolve: attach(true)}
	f["detachSkill"] = &gql.Field{Type: gql.NewNonNull(agentType), Description: "Takes a skill from an agent (admin); returns the agent. Tasks already assigned keep their agent.", Args: args, Resolve: attach(false)}
}
