package graphql

import (
	"cmp"
	"context"
	"strconv"
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Page sizes of the paginated lists (tasks, conversations, messages, documents): first
// defaults to DefaultPageSize and may be at most MaxPageSize (the service's own bound).
const (
	DefaultPageSize = 100
	MaxPageSize     = service.MaxListLimit
)

// WithPrincipal returns a context carrying the caller that resolvers act for.
func WithPrincipal(ctx context.Context, p *auth.Principal) context.Context {
	return auth.NewContext(ctx, p)
}

func principalOf(ctx context.Context) *auth.Principal { return auth.FromContext(ctx) }

// stepView is a step with its 0-based position, the index the step-status mutation takes.
type stepView struct {
	Index int
	model.Step
}

// tokenView is a token and, only right after creation, its value.
type tokenView struct {
	model.Token
	Value *string
}

// NewSchema builds the schema over svc. The schema holds no per-request state.
func NewSchema(svc *service.Service) (gql.Schema, error) {
	modernIntrospection() // introspection.go
	b := builder{svc: svc}
	return gql.NewSchema(gql.SchemaConfig{Query: b.query(), Mutation: b.mutation(), Subscription: b.subscription()})
}

type builder struct {
	svc *service.Service
}

// resolve wraps a resolver: it hands it the principal and turns its error into one that
// carries extensions.code (and hides internal detail).
func resolve(fn func(p gql.ResolveParams, pr *auth.Principal) (any, error)) gql.FieldResolveFn {
	return func(p gql.ResolveParams) (v any, err error) {
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, publicError(p.Context, panicError{r})
			}
		}()
		v, err = fn(p, principalOf(p.Context))
		if err != nil {
			return nil, publicError(p.Context, err)
		}
		return v, nil
	}
}

// field is a resolver of a field of a Go value of type T.
func field[T any](get func(T) any) gql.FieldResolveFn {
	return func(p gql.ResolveParams) (any, error) {
		switch s := p.Source.(type) {
		case T:
			return get(s), nil
		case *T:
			return get(*s), nil
		}
		return nil, nil
	}
}

func timeString(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func timePtrString(t *time.Time) any {
	if t == nil {
		return nil
	}
	return timeString(*t)
}

func int64Ptr(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

var (
	nnString = gql.NewNonNull(gql.String)
	nnInt    = gql.NewNonNull(gql.Int)
	nnBool   = gql.NewNonNull(gql.Boolean)
	nnID     = gql.NewNonNull(gql.ID)
)

func listOf(t gql.Type) gql.Output { return gql.NewNonNull(gql.NewList(gql.NewNonNull(t))) }

// timeField is an RFC 3339 UTC timestamp field.
func timeField[T any](desc string, get func(T) time.Time, nullable bool) *gql.Field {
	typ := gql.Output(nnString)
	if nullable {
		typ = gql.String
	}
	return &gql.Field{Type: typ, Description: desc + " (RFC 3339, UTC)", Resolve: field(func(v T) any { return timeString(get(v)) })}
}

// Arguments of the paginated lists.
func pageArgs(args gql.FieldConfigArgument) gql.FieldConfigArgument {
	args["first"] = &gql.ArgumentConfig{Type: gql.Int, Description: "At most this many items, 1 to " + strconv.Itoa(MaxPageSize) + " (default " + strconv.Itoa(DefaultPageSize) + ")."}
	args["after"] = &gql.ArgumentConfig{Type: gql.Int, Description: "Only items after this id (the id of the last item of the previous page)."}
	return args
}

func pageOf(args map[string]any) (service.PageInput, error) {
	in := service.PageInput{Limit: DefaultPageSize}
	if v, ok := args["first"].(int); ok {
		if v < 1 || v > MaxPageSize {
			return in, errs.Invalid("first must be between 1 and %d", MaxPageSize)
		}
		in.Limit = v
	}
	if v, ok := args["after"].(int); ok {
		in.AfterID = int64(v)
	}
	return in, nil
}

func optInt64(args map[string]any, name string) *int64 {
	if v, ok := args[name].(int); ok {
		n := int64(v)
		return &n
	}
	return nil
}

func optString(args map[string]any, name string) *string {
	if v, ok := args[name].(string); ok {
		return &v
	}
	return nil
}

func argString(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

func argInt64(args map[string]any, name string) int64 {
	v, _ := args[name].(int)
	return int64(v)
}

func stringList(args map[string]any, name string) []string {
	raw, _ := args[name].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Types.

var taskStatusEnum = func() *gql.Enum {
	values := gql.EnumValueConfigMap{}
	for _, s := range model.TaskStatuses {
		values[s] = &gql.EnumValueConfig{Value: s}
	}
	return gql.NewEnum(gql.EnumConfig{Name: "TaskStatus", Description: "Status of a task.", Values: values})
}()

var stepStatusEnum = gql.NewEnum(gql.EnumConfig{Name: "StepStatus", Description: "Status of a step.", Values: gql.EnumValueConfigMap{
	model.StepPending:    &gql.EnumValueConfig{Value: model.StepPending},
	model.StepInProgress: &gql.EnumValueConfig{Value: model.StepInProgress},
	model.StepCompleted:  &gql.EnumValueConfig{Value: model.StepCompleted},
	model.StepSkipped:    &gql.EnumValueConfig{Value: model.StepSkipped},
}})

// viewerType is the caller itself: how it authenticated, what it may do, its project.
// taskCountsType is service.TaskCounts.
var taskCountsType = gql.NewObject(gql.ObjectConfig{Name: "TaskCounts", Description: "The number of the project's tasks in each status, and in all.", Fields: gql.Fields{
	"backlog": &gql.Field{Type: nnInt, Resolve: field(func(c *service.TaskCounts) any { return c.Backlog })},
	"todo":    &gql.Field{Type: nnInt, Resolve: field(func(c *service.TaskCounts) any { return c.Todo })},
	"doing":   &gql.Field{Type: nnInt, Resolve: field(func(c *service.TaskCounts) any { return c.Doing })},
	"waiting": &gql.Field{Type: nnInt, Resolve: field(func(c *service.TaskCounts) any { return c.Waiting })},
	"done":    &gql.Field{Type: nnInt, Resolve: field(func(c *service.TaskCounts) any { return c.Done })},
	"failed":  &gql.Field{Type: nnInt, Resolve: field(func(c *service.TaskCounts) any { return c.Failed })},
	"total":   &gql.Field{Type: nnInt, Resolve: field(func(c *service.TaskCounts) any { return c.Total })},
}})

var viewerType = gql.NewObject(gql.ObjectConfig{Name: "Viewer", Description: "The caller: who it is, its scopes and its project.", Fields: gql.Fields{
	"kind":      &gql.Field{Type: nnString, Description: "token, owner or agent.", Resolve: field(func(p *auth.Principal) any { return string(p.Kind) })},
	"name":      &gql.Field{Type: nnString, Description: "The token's name, the agent's name, or owner.", Resolve: field(func(p *auth.Principal) any { return p.Name })},
	"scopes":    &gql.Field{Type: listOf(gql.String), Resolve: field(func(p *auth.Principal) any { return p.Scopes })},
	"projectId": &gql.Field{Type: nnID, Resolve: field(func(p *auth.Principal) any { return p.ProjectID })},
}})

var projectType = gql.NewObject(gql.ObjectConfig{Name: "Project", Description: "A project: it owns agents, tokens, tasks and conversations.", Fields: gql.Fields{
	"id":        &gql.Field{Type: nnID, Description: "Opaque project id.", Resolve: field(func(p model.Project) any { return p.ID })},
	"name":      &gql.Field{Type: nnString, Resolve: field(func(p model.Project) any { return p.Name })},
	"namespace": &gql.Field{Type: nnString, Resolve: field(func(p model.Project) any { return p.Namespace })},
	"createdAt": timeField("When the project was created", func(p model.Project) time.Time { return p.CreatedAt }, true),
}})

var agentType = gql.NewObject(gql.ObjectConfig{Name: "Agent", Description: "A software agent registered in the project.", Fields: gql.Fields{
	"id":          &gql.Field{Type: nnInt, Resolve: field(func(a model.Agent) any { return a.ID })},
	"name":        &gql.Field{Type: nnString, Description: "The name the agent authenticates with (AGENT_NAME); it never changes.", Resolve: field(func(a model.Agent) any { return a.Name })},
	"displayName": &gql.Field{Type: nnString, Description: "A name for people; the name when none was set (updateAgent).", Resolve: field(func(a model.Agent) any { return cmp.Or(a.DisplayName, a.Name) })},
	"description": &gql.Field{Type: nnString, Description: "What the agent does; empty when none was set (updateAgent).", Resolve: field(func(a model.Agent) any { return a.Description })},
	"createdAt":   timeField("When the agent was registered", func(a model.Agent) time.Time { return a.CreatedAt }, true),
	"lastSeenAt": &gql.Field{Type: gql.String, Description: "The agent's last contact (an authenticated request or its open event stream), to about 30 seconds (RFC 3339, UTC); null when never seen.",
		Resolve: field(func(a model.Agent) any {
			if a.LastSeenAt == nil {
				return nil
			}
			return timeString(*a.LastSeenAt)
		})},
}})

var envVarType = gql.NewObject(gql.ObjectConfig{Name: "EnvVar", Description: "One variable of an agent's environment.", Fields: gql.Fields{
	"name":  &gql.Field{Type: nnString, Resolve: field(func(e service.EnvVar) any { return e.Name })},
	"value": &gql.Field{Type: nnString, Resolve: field(func(e service.EnvVar) any { return e.Value })},
}})

var stepType = gql.NewObject(gql.ObjectConfig{Name: "Step", Description: "An ordered subtask of a task.", Fields: gql.Fields{
	"id":     &gql.Field{Type: nnInt, Description: "The task's id × 1000 + index.", Resolve: field(func(s stepView) any { return s.ID })},
	"index":  &gql.Field{Type: nnInt, Description: "0-based position, as setStepStatus takes it.", Resolve: field(func(s stepView) any { return s.Index })},
	"title":  &gql.Field{Type: nnString, Resolve: field(func(s stepView) any { return s.Title })},
	"status": &gql.Field{Type: gql.NewNonNull(stepStatusEnum), Resolve: field(func(s stepView) any { return s.Status })},
}})

var taskMessageType = gql.NewObject(gql.ObjectConfig{Name: "TaskMessage", Description: "One entry of a task's conversation.", Fields: gql.Fields{
	"role":      &gql.Field{Type: nnString, Description: "user or assistant.", Resolve: field(func(m model.TaskMessage) any { return m.Role })},
	"content":   &gql.Field{Type: nnString, Resolve: field(func(m model.TaskMessage) any { return m.Content })},
	"createdAt": timeField("When the entry was added", func(m model.TaskMessage) time.Time { return m.CreatedAt }, false),
	"author": &gql.Field{Type: nnString, Description: "Who wrote it: the person (\"answered by Dana\"), token, agent or local owner, named as the activity trail names them; empty for entries written before authors were kept.",
		Resolve: field(func(m model.TaskMessage) any { return m.Author })},
	"question": &gql.Field{Type: gql.String, Description: "On an answer (respond): the question it answered, the task's waitingDetails at that moment; null on every other entry.",
		Resolve: field(func(m model.TaskMessage) any {
			if m.Question == "" {
				return nil
			}
			return m.Question
		})},
}})

var taskType = gql.NewObject(gql.ObjectConfig{Name: "Task", Description: "A unit of work, optionally assigned to one agent.", Fields: gql.Fields{
	"id":      &gql.Field{Type: nnInt, Resolve: field(func(t model.Task) any { return t.ID })},
	"summary": &gql.Field{Type: nnString, Resolve: field(func(t model.Task) any { return t.Summary })},
	"details": &gql.Field{Type: nnString, Resolve: field(func(t model.Task) any { return t.Details })},
	"status":  &gql.Field{Type: gql.NewNonNull(taskStatusEnum), Resolve: field(func(t model.Task) any { return t.Status })},
	"steps": &gql.Field{Type: listOf(stepType), Resolve: field(func(t model.Task) any {
		out := make([]stepView, len(t.Steps))
		for i, s := range t.Steps {
			out[i] = stepView{Index: i, Step: s}
		}
		return out
	})},
	"agentId":        &gql.Field{Type: gql.Int, Resolve: field(func(t model.Task) any { return int64Ptr(t.AgentID) })},
	"agent":          &gql.Field{Type: agentType, Description: "The assigned agent; null when unassigned. Its profile is loaded once per request for a whole list.", Resolve: taskAgent},
	"conversationId": &gql.Field{Type: gql.Int, Description: "The linked conversation, if any.", Resolve: field(func(t model.Task) any { return int64Ptr(t.ConversationID) })},
	"conversation": &gql.Field{Type: gql.NewList(gql.NewNonNull(taskMessageType)),
		Description: "The task's message history. Loaded by task(id) and by mutations; null in the tasks list (query task(id) for it).",
		Resolve: field(func(t model.Task) any {
			if t.Conversation == nil {
				return nil
			}
			return t.Conversation
		})},
	"source":         &gql.Field{Type: nnString, Description: "user, agent or job.", Resolve: field(func(t model.Task) any { return t.Source })},
	"taskType":       &gql.Field{Type: nnString, Resolve: field(func(t model.Task) any { return t.TaskType })},
	"currentStepNum": &gql.Field{Type: nnInt, Resolve: field(func(t model.Task) any { return t.CurrentStepNum })},
	"isActive":       &gql.Field{Type: nnBool, Resolve: field(func(t model.Task) any { return t.IsActive })},
	"isWaiting":      &gql.Field{Type: nnBool, Resolve: field(func(t model.Task) any { return t.IsWaiting })},
	"waitingDetails": &gql.Field{Type: gql.String, Description: "What the task waits for; set only while Waiting.", Resolve: field(func(t model.Task) any {
		if t.WaitingDetails == nil {
			return nil
		}
		return *t.WaitingDetails
	})},
	"waitingVersion": &gql.Field{Type: nnInt, Description: "Goes up by one with every new question: on entering Waiting, and when waitingDetails change while it stays Waiting; respond may pass it.", Resolve: field(func(t model.Task) any { return t.WaitingVersion })},
	"createdAt":      timeField("When the task was created", func(t model.Task) time.Time { return t.CreatedAt }, false),
	"updatedAt":      timeField("When the task last changed", func(t model.Task) time.Time { return t.UpdatedAt }, false),
}})

var tokenType = gql.NewObject(gql.ObjectConfig{Name: "Token", Description: "A platform or data token. Its value is only ever shown in the result of the mutation that creates it.", Fields: gql.Fields{
	"id":         &gql.Field{Type: nnInt, Resolve: field(func(t tokenView) any { return t.ID })},
	"name":       &gql.Field{Type: nnString, Resolve: field(func(t tokenView) any { return t.Name })},
	"type":       &gql.Field{Type: nnString, Description: "platform or data.", Resolve: field(func(t tokenView) any { return t.Type })},
	"scopes":     &gql.Field{Type: listOf(gql.String), Resolve: field(func(t tokenView) any { return t.Scopes })},
	"hint":       &gql.Field{Type: nnString, Description: "A short, non-secret part of the value, to tell tokens apart.", Resolve: field(func(t tokenView) any { return t.Hint })},
	"createdAt":  timeField("When the token was created", func(t tokenView) time.Time { return t.CreatedAt }, false),
	"expiresAt":  &gql.Field{Type: gql.String, Description: "Expiry (RFC 3339, UTC), if any.", Resolve: field(func(t tokenView) any { return timePtrString(t.ExpiresAt) })},
	"lastUsedAt": &gql.Field{Type: gql.String, Description: "Last use (RFC 3339, UTC), if any.", Resolve: field(func(t tokenView) any { return timePtrString(t.LastUsedAt) })},
	"revokedAt":  &gql.Field{Type: gql.String, Description: "Revocation (RFC 3339, UTC), if revoked.", Resolve: field(func(t tokenView) any { return timePtrString(t.RevokedAt) })},
	"createdBy": &gql.Field{Type: personType, Description: "The person who made the token (signed in, or with a token they made); null for tokens of the command line and the desktop window. Removed from the project, or given a role without one of the token's scopes, that person's tokens are revoked.", Resolve: field(func(t tokenView) any {
		if t.CreatedBy == nil {
			return nil
		}
		return *t.CreatedBy
	})},
	"token": &gql.Field{Type: gql.String, Description: "The token's value: set only in the result of createPlatformToken, createDataToken or rotateToken, shown this once.", Resolve: field(func(t tokenView) any {
		if t.Value == nil {
			return nil
		}
		return *t.Value
	})},
}})

var personType = gql.NewObject(gql.ObjectConfig{Name: "Person", Description: "A person, where a record says who did something.", Fields: gql.Fields{
	"id":   &gql.Field{Type: nnInt, Description: "The user's id (Member.userId).", Resolve: field(func(u model.UserRef) any { return u.ID })},
	"name": &gql.Field{Type: nnString, Resolve: field(func(u model.UserRef) any { return u.Name })},
	"email": &gql.Field{Type: gql.String, Description: "null for a user added by name only.", Resolve: field(func(u model.UserRef) any {
		if u.Email == nil {
			return nil
		}
		return *u.Email
	})},
}})

var conversationType = gql.NewObject(gql.ObjectConfig{Name: "Conversation", Description: "A message thread of the project.", Fields: gql.Fields{
	"id":        &gql.Field{Type: nnInt, Resolve: field(func(c model.Conversation) any { return c.ID })},
	"uuid":      &gql.Field{Type: nnString, Resolve: field(func(c model.Conversation) any { return c.UUID })},
	"projectId": &gql.Field{Type: nnID, Resolve: field(func(c model.Conversation) any { return c.ProjectID })},
	"name": &gql.Field{Type: gql.String, Description: "null for a conversation created without a name.", Resolve: field(func(c model.Conversation) any {
		if c.Name == nil {
			return nil
		}
		return *c.Name
	})},
	"participants": &gql.Field{Type: listOf(gql.String), Description: "Participants' names, in the order they joined.", Resolve: field(func(c model.Conversation) any { return c.Participants })},
	"createdAt":    timeField("When the conversation was created", func(c model.Conversation) time.Time { return c.CreatedAt }, false),
	"lastReadMessageId": &gql.Field{Type: gql.Int, Description: "In the conversations list, the caller's read marker: the last message they read, 0 for none. null for agents and elsewhere.",
		Resolve: field(func(c model.Conversation) any { return int64Ptr(c.LastReadMessageID) })},
	"unread": &gql.Field{Type: gql.Int, Description: "In the conversations list, how many messages come after the caller's read marker. null for agents and elsewhere.",
		Resolve: field(func(c model.Conversation) any { return int64Ptr(c.Unread) })},
}})

var participantType = gql.NewObject(gql.ObjectConfig{Name: "Participant", Description: "A user or an agent taking part in a conversation.", Fields: gql.Fields{
	"kind":      &gql.Field{Type: nnString, Description: "user or agent.", Resolve: field(func(p model.Participant) any { return p.Kind })},
	"name":      &gql.Field{Type: nnString, Resolve: field(func(p model.Participant) any { return p.Name })},
	"agentId":   &gql.Field{Type: gql.Int, Resolve: field(func(p model.Participant) any { return int64Ptr(p.AgentID) })},
	"createdAt": timeField("When the participant joined", func(p model.Participant) time.Time { return p.CreatedAt }, false),
}})

var reactionCountType = gql.NewObject(gql.ObjectConfig{Name: "ReactionCount", Description: "How many actors reacted to a message with one emoji.", Fields: gql.Fields{
	"emoji": &gql.Field{Type: nnString, Resolve: field(func(r model.ReactionCount) any { return r.Emoji })},
	"count": &gql.Field{Type: nnInt, Resolve: field(func(r model.ReactionCount) any { return r.Count })},
}})

var mentionType = gql.NewObject(gql.ObjectConfig{Name: "Mention", Description: "A member or an agent of the project named with @ in a message.", Fields: gql.Fields{
	"kind":    &gql.Field{Type: nnString, Description: "user or agent.", Resolve: field(func(m model.Mention) any { return m.Kind })},
	"name":    &gql.Field{Type: nnString, Description: "The member's name as the project shows it, or the agent's name.", Resolve: field(func(m model.Mention) any { return m.Name })},
	"userId":  &gql.Field{Type: gql.Int, Description: "The member, for people.", Resolve: field(func(m model.Mention) any { return int64Ptr(m.UserID) })},
	"agentId": &gql.Field{Type: gql.Int, Description: "The agent, for agents.", Resolve: field(func(m model.Mention) any { return int64Ptr(m.AgentID) })},
	"text":    &gql.Field{Type: nnString, Description: "How the message named them, @ included.", Resolve: field(func(m model.Mention) any { return m.Text })},
}})

var messageType = gql.NewObject(gql.ObjectConfig{Name: "Message", Description: "A message of a conversation.", Fields: gql.Fields{
	"id":             &gql.Field{Type: nnInt, Resolve: field(func(m model.Message) any { return m.ID })},
	"conversationId": &gql.Field{Type: nnInt, Resolve: field(func(m model.Message) any { return m.ConversationID })},
	"author":         &gql.Field{Type: nnString, Description: "Display name of the author.", Resolve: field(func(m model.Message) any { return m.Author })},
	"authorType":     &gql.Field{Type: nnString, Description: "user or agent.", Resolve: field(func(m model.Message) any { return m.AuthorType })},
	"agentId":        &gql.Field{Type: gql.Int, Resolve: field(func(m model.Message) any { return int64Ptr(m.AgentID) })},
	"content":        &gql.Field{Type: nnString, Resolve: field(func(m model.Message) any { return m.Content })},
	"reactions": &gql.Field{Type: listOf(reactionCountType), Description: "Counts per emoji, loaded with the messages (no query per message).", Resolve: field(func(m model.Message) any {
		if m.Reactions == nil {
			return []model.ReactionCount{}
		}
		return m.Reactions
	})},
	"mentions": &gql.Field{Type: listOf(mentionType), Description: "The members and agents the content names with @, in the order first named (found when it was posted).", Resolve: field(func(m model.Message) any {
		if m.Mentions == nil {
			return []model.Mention{}
		}
		return m.Mentions
	})},
	"createdAt": timeField("When the message was posted", func(m model.Message) time.Time { return m.CreatedAt }, false),
}})

var reactionType = gql.NewObject(gql.ObjectConfig{Name: "Reaction", Description: "One actor's emoji on a message.", Fields: gql.Fields{
	"messageId": &gql.Field{Type: nnInt, Resolve: field(func(r model.Reaction) any { return r.MessageID })},
	"emoji":     &gql.Field{Type: nnString, Resolve: field(func(r model.Reaction) any { return r.Emoji })},
	"actorKind": &gql.Field{Type: nnString, Description: "user or agent.", Resolve: field(func(r model.Reaction) any { return r.ActorKind })},
	"actor":     &gql.Field{Type: nnString, Resolve: field(func(r model.Reaction) any { return r.Actor })},
	"createdAt": timeField("When the reaction was added", func(r model.Reaction) time.Time { return r.CreatedAt }, false),
}})

var documentType = gql.NewObject(gql.ObjectConfig{Name: "Document", Description: "A file shared in a conversation (upload it through REST).", Fields: gql.Fields{
	"id":             &gql.Field{Type: nnInt, Resolve: field(func(d model.Document) any { return d.ID })},
	"conversationId": &gql.Field{Type: nnInt, Resolve: field(func(d model.Document) any { return d.ConversationID })},
	"name":           &gql.Field{Type: nnString, Resolve: field(func(d model.Document) any { return d.Name })},
	"mimeType":       &gql.Field{Type: nnString, Resolve: field(func(d model.Document) any { return d.MimeType })},
	"size":           &gql.Field{Type: nnInt, Description: "Size in bytes.", Resolve: field(func(d model.Document) any { return d.Size })},
	"uploadedBy":     &gql.Field{Type: nnString, Resolve: field(func(d model.Document) any { return d.UploadedBy })},
	"createdAt":      timeField("When the document was shared", func(d model.Document) time.Time { return d.CreatedAt }, false),
	"url":            &gql.Field{Type: nnString, Description: "Download link, relative to the server.", Resolve: field(func(d model.Document) any { return d.URL })},
}})

var stepInputType = gql.NewInputObject(gql.InputObjectConfig{Name: "StepInput", Description: "A step of a new task.", Fields: gql.InputObjectConfigFieldMap{
	"title": &gql.InputObjectFieldConfig{Type: nnString},
}})
