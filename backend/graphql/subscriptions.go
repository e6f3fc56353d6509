package graphql

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	gql "github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Subscriptions follow the stored event stream (backend/events), so they see exactly
// what GET /api/events sends: the caller's own project's events that its scopes can read.
// They are served over WebSocket (ws.go), which puts a *subscriptionEnv in the context.

// subscriptionEnv is what a subscription needs from the connection serving it.
type subscriptionEnv struct {
	hub   *events.Hub
	watch *events.Watch // the connection's credential
	// ready is called once the subscription is registered with the hub: events
	// committed from then on reach it.
	ready func()
	// slow is called when the hub drops the subscriber for falling behind; last is the
	// seq of the last event it was handed.
	slow func(last int64)
	// fresh is called before each event is executed, so that per-request caches (the
	// agents of tasks) do not outlive the event they were loaded for.
	fresh func()
}

type envKey struct{}

func withEnv(ctx context.Context, env *subscriptionEnv) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

func envOf(ctx context.Context) *subscriptionEnv {
	env, _ := ctx.Value(envKey{}).(*subscriptionEnv)
	return env
}

// Kinds of task change.
const (
	changeCreated = "created"
	changeUpdated = "updated"
	changeDeleted = "deleted"
	changeReset   = "reset"
)

// taskChange is one item of taskChanged.
type taskChange struct {
	Seq    int64
	Kind   string
	TaskID *int64
	Task   *model.Task
	// Appended is what the change added to the task's conversation (model.TaskEvent).
	Appended []model.TaskMessage
	At       time.Time
}

var taskChangeKindEnum = gql.NewEnum(gql.EnumConfig{Name: "TaskChangeKind", Description: "What happened to a task.", Values: gql.EnumValueConfigMap{
	changeCreated: &gql.EnumValueConfig{Value: changeCreated, Description: "The task was created; task is the new task."},
	changeUpdated: &gql.EnumValueConfig{Value: changeUpdated, Description: "The task changed; task is the task after the change."},
	changeDeleted: &gql.EnumValueConfig{Value: changeDeleted, Description: "The task was deleted; taskId says which, task is null."},
	changeReset:   &gql.EnumValueConfig{Value: changeReset, Description: "The changes after since are no longer kept (7 days): reload the tasks, then carry on with the changes that follow. taskId and task are null."},
}})

var taskChangeType = gql.NewObject(gql.ObjectConfig{Name: "TaskChange", Description: "A change to one of the project's tasks, as the event stream recorded it.", Fields: gql.Fields{
	"seq":  &gql.Field{Type: nnInt, Description: "The event's seq in the project's stream; subscribe again with since: seq to resume after it.", Resolve: field(func(c taskChange) any { return c.Seq })},
	"kind": &gql.Field{Type: gql.NewNonNull(taskChangeKindEnum), Resolve: field(func(c taskChange) any { return c.Kind })},
	"taskId": &gql.Field{Type: gql.Int, Description: "The task's id; null only for reset.", Resolve: field(func(c taskChange) any {
		return int64Ptr(c.TaskID)
	})},
	"task": &gql.Field{Type: taskType, Description: "The task after the change, without its conversation (null: query task(id) for the whole thread, then add appended); null when deleted (and for reset).", Resolve: field(func(c taskChange) any {
		if c.Task == nil {
			return nil
		}
		return *c.Task
	})},
	"appended": &gql.Field{Type: gql.NewList(gql.NewNonNull(taskMessageType)), Description: "The entries this change added to the task's conversation, oldest first (an answer, a comment, an agent's message); empty when it added none, null when deleted (and for reset).", Resolve: field(func(c taskChange) any {
		if c.Task == nil {
			return nil
		}
		return c.Appended
	})},
	"at": timeField("When the change happened", func(c taskChange) time.Time { return c.At }, false),
}})

// subscribe wraps a subscription's source function as resolve does a resolver.
func subscribe(fn func(p gql.ResolveParams, pr *auth.Principal, env *subscriptionEnv) (chan any, error)) gql.FieldResolveFn {
	return func(p gql.ResolveParams) (v any, err error) {
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, publicError(p.Context, panicError{r})
			}
		}()
		env := envOf(p.Context)
		if env == nil {
			return nil, publicError(p.Context, errs.Invalid("subscriptions are served over WebSocket: connect to /graphql with the graphql-transport-ws protocol"))
		}
		ch, err := fn(p, principalOf(p.Context), env)
		if err != nil {
			return nil, publicError(p.Context, err)
		}
		return ch, nil
	}
}

// sourceValue is the resolver of a subscription field: the value is the event itself.
func sourceValue(p gql.ResolveParams) (any, error) { return p.Source, nil }

func (b builder) subscription() *gql.Object {
	svc := b.svc
	return gql.NewObject(gql.ObjectConfig{Name: "Subscription", Description: "Live changes, served over WebSocket at /graphql with the graphql-transport-ws protocol. " +
		"They follow the same stored stream as GET /api/events: only the caller's project, only what its scopes can read.",
		Fields: gql.Fields{
			"taskChanged": &gql.Field{Type: gql.NewNonNull(taskChangeType),
				Description: "Every change to the project's tasks (task:read): created, updated (any change: status, steps, agent, respond, callbacks) and deleted. " +
					"A deletion is a TaskChange of kind deleted with the taskId and a null task. " +
					"With since, the changes after that seq are replayed first, then live ones follow: keep the last seq and nothing is missed across reconnects; " +
					"if since is older than the kept stream, the first item is of kind reset.",
				Args: gql.FieldConfigArgument{"since": {Type: gql.Int, Description: "Replay the changes after this seq (a TaskChange's seq), then follow; without it only new changes are sent."}},
				Subscribe: subscribe(func(p gql.ResolveParams, pr *auth.Principal, env *subscriptionEnv) (chan any, error) {
					if err := svc.WatchTasks(p.Context, pr); err != nil {
						return nil, err
					}
					since := int64(-1)
					if v, ok := p.Args["since"].(int); ok {
						if v < 0 {
							return nil, errs.Invalid("since must be 0 or more")
						}
						since = int64(v)
					}
					return follow(p.Context, env, since, func(e storedEvent) (any, bool) {
						c := taskChange{Seq: e.Seq, At: e.At}
						switch e.Type {
						case service.EventTaskCreated, service.EventTaskUpdated:
							var d struct {
								model.Task
								Appended []model.TaskMessage `json:"appended"`
							}
							if json.Unmarshal(e.Data, &d) != nil {
								return nil, false
							}
							c.Kind, c.TaskID, c.Task, c.Appended = changeUpdated, &d.ID, &d.Task, d.Appended
							if c.Appended == nil {
								c.Appended = []model.TaskMessage{} // written before events carried it
							}
							if e.Type == service.EventTaskCreated {
								c.Kind = changeCreated
							}
						case service.EventTaskDeleted:
							var d struct{ ID int64 }
							if json.Unmarshal(e.Data, &d) != nil {
								return nil, false
							}
							c.Kind, c.TaskID = changeDeleted, &d.ID
						case "stream.reset":
							c.Kind = changeReset
						default:
							return nil, false
						}
						return c, true
					})
				}),
				Resolve: sourceValue,
			},
			"messageAdded": &gql.Field{Type: gql.NewNonNull(messageType),
				Description: "Each new message of a conversation (messaging:read), live. To catch up after a reconnect, subscribe, then query messages(conversationId, after: the last id you had).",
				Args:        gql.FieldConfigArgument{"conversationId": {Type: nnID, Description: "Integer id or uuid."}},
				Subscribe: subscribe(func(p gql.ResolveParams, pr *auth.Principal, env *subscriptionEnv) (chan any, error) {
					convID, err := svc.WatchMessages(p.Context, pr, argString(p.Args, "conversationId"))
					if err != nil {
						return nil, err
					}
					return follow(p.Context, env, -1, func(e storedEvent) (any, bool) {
						if e.Type != service.EventMessageCreated {
							return nil, false
						}
						var m model.Message
						if json.Unmarshal(e.Data, &m) != nil || m.ConversationID != convID {
							return nil, false
						}
						return m, true
					})
				}),
				Resolve: sourceValue,
			},
		}})
}

// storedEvent is an event of the stream, decoded.
type storedEvent struct {
	Seq  int64           `json:"seq"`
	Type string          `json:"type"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data"`
}

// follow subscribes the connection's principal to its project's stream after since (-1:
// live only) and returns the channel graphql-go reads the subscription's items from:
// what pick makes of each event it keeps. The channel closes when ctx ends, the hub
// drops the subscriber, or the credential ends (the connection then closes with 4401).
func follow(ctx context.Context, env *subscriptionEnv, since int64, pick func(storedEvent) (any, bool)) (chan any, error) {
	if since >= 0 {
		// Whatever is committed from now on comes in the replay or live: the socket may
		// go on while the replay waits for its turn.
		env.ready()
	}
	sub, err := env.hub.Subscribe(ctx, env.watch, since)
	if err != nil {
		return nil, err
	}
	env.ready()
	out := make(chan any)
	go func() {
		defer close(out)
		defer env.hub.Unsubscribe(sub)
		skip, last := sub.Skip, sub.From()
		emit := func(m *events.Message) error {
			reset := m.Type == "stream.reset"
			if !reset && m.Seq <= skip {
				return nil // already sent by the replay
			}
			last = m.Seq
			if !reset {
				skip = m.Seq
			}
			var e storedEvent
			if err := json.Unmarshal(m.JSON, &e); err != nil {
				return nil
			}
			v, ok := pick(e)
			if !ok {
				return nil
			}
			env.fresh()
			select {
			case out <- v:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := env.hub.Replay(ctx, sub, emit); err != nil {
			select {
			case <-sub.Gone:
				env.slow(last)
			default:
			}
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-env.watch.Ended():
				return
			case <-sub.Gone:
				env.slow(last)
				return
			case m := <-sub.C:
				if emit(m) != nil {
					return
				}
			}
		}
	}()
	return out, nil
}

// agentLoader loads the project's agents once per request (or per subscription event),
// so that a list of tasks asking for their agents' profiles costs one query, not one
// per task.
type agentLoader struct {
	svc *service.Service
	pr  *auth.Principal

	mu     sync.Mutex
	agents map[int64]model.Agent
}

type loaderKey struct{}

func withAgentLoader(ctx context.Context, svc *service.Service, pr *auth.Principal) (context.Context, *agentLoader) {
	l := &agentLoader{svc: svc, pr: pr}
	return context.WithValue(ctx, loaderKey{}, l), l
}

// reset forgets the loaded agents.
func (l *agentLoader) reset() {
	l.mu.Lock()
	l.agents = nil
	l.mu.Unlock()
}

// agent returns the agent of the caller's project with this id.
func (l *agentLoader) agent(ctx context.Context, id int64) (model.Agent, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.agents == nil {
		list, err := l.svc.Agents(ctx, l.pr)
		if err != nil {
			return model.Agent{}, false, err
		}
		l.agents = make(map[int64]model.Agent, len(list))
		for _, a := range list {
			l.agents[a.ID] = a
		}
	}
	a, ok := l.agents[id]
	return a, ok, nil
}

// taskAgent resolves Task.agent: the id and name come with the task; the profile, when
// the query asks for it, from the request's agentLoader.
func taskAgent(p gql.ResolveParams) (any, error) {
	var t model.Task
	switch s := p.Source.(type) {
	case model.Task:
		t = s
	case *model.Task:
		t = *s
	default:
		return nil, nil
	}
	if t.AgentID == nil {
		return nil, nil
	}
	basic := model.Agent{ID: *t.AgentID, ProjectID: t.ProjectID, Name: t.AgentName}
	if !asksBeyond(p, "id", "name", "__typename") {
		return basic, nil
	}
	l, _ := p.Context.Value(loaderKey{}).(*agentLoader)
	if l == nil {
		return basic, nil
	}
	a, ok, err := l.agent(p.Context, *t.AgentID)
	if err != nil {
		return nil, publicError(p.Context, err)
	}
	if !ok {
		return basic, nil
	}
	return a, nil
}

// asksBeyond reports whether the field's selection asks for anything but these fields
// (a fragment counts as asking for more).
func asksBeyond(p gql.ResolveParams, fields ...string) bool {
	for _, f := range p.Info.FieldASTs {
		if f.SelectionSet == nil {
			continue
		}
		for _, sel := range f.SelectionSet.Selections {
			fld, ok := sel.(*ast.Field)
			if !ok || fld.Name == nil || !slices.Contains(fields, fld.Name.Value) {
				return true
			}
		}
	}
	return false
}
