package graphql

import (
	"strings"
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Members, agent profiles and token rotation.

var memberRoleEnum = func() *gql.Enum {
	desc := map[string]string{
		model.RoleOwner:  "Everything an admin may do, and making, unmaking and removing owners. A project always keeps at least one owner.",
		model.RoleAdmin:  "Scopes " + strings.Join(service.RoleScopes(model.RoleAdmin), ", ") + ": also manages agents, tokens and members (but not owners).",
		model.RoleMember: "Scopes " + strings.Join(service.RoleScopes(model.RoleMember), ", ") + ": works on tasks and conversations.",
		model.RoleViewer: "Scopes " + strings.Join(service.RoleScopes(model.RoleViewer), ", ") + ": reads tasks and conversations.",
	}
	values := gql.EnumValueConfigMap{}
	for _, r := range model.MemberRoles {
		values[r] = &gql.EnumValueConfig{Value: r, Description: desc[r]}
	}
	return gql.NewEnum(gql.EnumConfig{Name: "MemberRole", Values: values,
		Description: "A member's role in a project. It bounds what the member may do: a session of that user holds the role's scopes, never more."})
}()

var memberType = gql.NewObject(gql.ObjectConfig{Name: "Member", Description: "A user of the project, with a role.", Fields: gql.Fields{
	"userId": &gql.Field{Type: nnInt, Resolve: field(func(m model.Member) any { return m.UserID })},
	"name":   &gql.Field{Type: nnString, Resolve: field(func(m model.Member) any { return m.Name })},
	"email": &gql.Field{Type: gql.String, Description: "null for a user added by name only.", Resolve: field(func(m model.Member) any {
		if m.Email == nil {
			return nil
		}
		return *m.Email
	})},
	"role":         &gql.Field{Type: gql.NewNonNull(memberRoleEnum), Resolve: field(func(m model.Member) any { return m.Role })},
	"scopes":       &gql.Field{Type: listOf(gql.String), Description: "What the role allows (see MemberRole).", Resolve: field(func(m model.Member) any { return service.RoleScopes(m.Role) })},
	"isLocalOwner": &gql.Field{Type: nnBool, Description: "The machine's own user: the CLI and the desktop window act as it.", Resolve: field(func(m model.Member) any { return m.LocalOwner })},
	"createdAt":    timeField("When the user joined the project", func(m model.Member) time.Time { return m.CreatedAt }, false),
	"updatedAt":    timeField("When the role last changed", func(m model.Member) time.Time { return m.UpdatedAt }, false),
}})

func (b builder) moreQueries(f gql.Fields) gql.Fields {
	svc := b.svc
	f["members"] = &gql.Field{Type: listOf(memberType), Description: "The project's users and their roles, in the order they joined (any platform scope).",
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Members(p.Context, pr)
		})}
	// The vector domain: spaces, documents, search (vector.go).
	f = b.vectorQueries(f)
	return b.platformQueries(f) // skills, jobs, billing, activity (activity.go)
}

func (b builder) moreMutations(f gql.Fields) gql.Fields {
	svc := b.svc
	f["addMember"] = &gql.Field{Type: gql.NewNonNull(memberType),
		Description: "Adds a user to the project (admin; only an owner adds owners). The user with that email is reused; without email, a new user of that name is made " +
			"(names are matched only among the project's members: a name already there is a conflict).",
		Args: gql.FieldConfigArgument{
			"email": {Type: gql.String, Description: "The user's email (give it or name)."},
			"name":  {Type: gql.String, Description: "The user's name (default: the email's part before @)."},
			"role":  {Type: gql.NewNonNull(memberRoleEnum)},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.AddMember(p.Context, pr, service.AddMemberInput{Name: argString(p.Args, "name"), Email: argString(p.Args, "email"), Role: argString(p.Args, "role")})
		})}
	f["setMemberRole"] = &gql.Field{Type: gql.NewNonNull(memberType),
		Description: "Changes a member's role (admin; only an owner makes or unmakes owners). The last owner cannot be demoted.",
		Args:        gql.FieldConfigArgument{"userId": {Type: nnInt}, "role": {Type: gql.NewNonNull(memberRoleEnum)}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.SetMemberRole(p.Context, pr, argInt64(p.Args, "userId"), argString(p.Args, "role"))
		})}
	f["removeMember"] = &gql.Field{Type: nnBool,
		Description: "Removes a user from the project (admin; only an owner removes owners); true when done. The last owner cannot be removed.",
		Args:        gql.FieldConfigArgument{"userId": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			if err := svc.RemoveMember(p.Context, pr, argInt64(p.Args, "userId")); err != nil {
				return nil, err
			}
			return true, nil
		})}
	f["updateAgent"] = &gql.Field{Type: gql.NewNonNull(agentType),
		Description: "Changes an agent's profile (admin). Arguments left out stay as they are; an empty string clears. The name, which the agent authenticates with, does not change.",
		Args: gql.FieldConfigArgument{
			"id":          {Type: nnInt},
			"displayName": {Type: gql.String, Description: "A name for people, at most 200 characters."},
			"description": {Type: gql.String, Description: "What the agent does, at most 10000 characters."},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			in := service.UpdateAgentInput{DisplayName: optString(p.Args, "displayName"), Description: optString(p.Args, "description")}
			return svc.UpdateAgent(p.Context, pr, argInt64(p.Args, "id"), in)
		})}
	f["deleteAgent"] = &gql.Field{Type: nnBool,
		Description: "Deletes an agent (admin); true when done. Its tasks become unassigned (their status does not change), it leaves its conversations, its messages stay.",
		Args:        gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			if err := svc.DeleteAgent(p.Context, pr, argInt64(p.Args, "id")); err != nil {
				return nil, err
			}
			return true, nil
		})}
	f["rotateToken"] = &gql.Field{Type: gql.NewNonNull(tokenType),
		Description: "Replaces a token (admin): revokes it and returns a new one with the same name, type and scopes, its value in token, shown this once. " +
			"A token with an expiry gets the same lifetime again, counted from now. Revoked tokens cannot be rotated.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			value, tok, err := svc.RotateToken(p.Context, pr, argInt64(p.Args, "id"))
			if err != nil {
				return nil, err
			}
			return tokenView{Token: *tok, Value: &value}, nil
		})}
	f["rotateProjectSecret"] = &gql.Field{Type: gql.NewNonNull(projectSecretType),
		Description: "Replaces the caller's project's secret, e.g. after a leak (admin plus every scope an agent holds, like agentEnv). " +
			"Agents using the old secret's digest are refused at once; give them the new environment (agentEnv).",
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.RotateProjectSecret(p.Context, pr)
		})}
	// The vector domain: spaces, documents, agent links (vector.go).
	f = b.vectorMutations(f)
	return b.platformMutations(f) // skills, jobs, billing (activity.go)
}

// projectSecretType is a project with its new secret, as rotateProjectSecret returns it
// (Project itself never shows the secret).
var projectSecretType = gql.NewObject(gql.ObjectConfig{Name: "ProjectSecret", Description: "A project and its agents' new secret (SERVICE_TOKEN_SECRET).", Fields: gql.Fields{
	"id":        &gql.Field{Type: nnID, Resolve: field(func(p model.Project) any { return p.ID })},
	"name":      &gql.Field{Type: nnString, Resolve: field(func(p model.Project) any { return p.Name })},
	"namespace": &gql.Field{Type: nnString, Resolve: field(func(p model.Project) any { return p.Namespace })},
	"tokenSecret": &gql.Field{Type: nnString, Description: "The new secret: agents send the hex SHA-1 of the project id followed by it (SERVICE_API_TOKEN).",
		Resolve: field(func(p model.Project) any { return p.TokenSecret })},
}})
