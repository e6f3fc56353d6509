package graphql

import (
	"strconv"
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// The resolvers below only translate: arguments in, service call with the principal,
// result out. Scopes and rules are the service's.

func (b builder) query() *gql.Object {
	svc := b.svc
	return gql.NewObject(gql.ObjectConfig{Name: "Query", Fields: b.moreQueries(gql.Fields{
		"viewer": &gql.Field{Type: gql.NewNonNull(viewerType), Description: "The caller: its kind, name, scopes and project id.",
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				if pr == nil {
					return nil, errs.Unauth("authentication required")
				}
				return pr, nil
			})},
		"projects": &gql.Field{Type: listOf(projectType), Description: "The caller's project (every project for the local owner).",
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.Projects(p.Context, pr)
			})},
		"project": &gql.Field{Type: gql.NewNonNull(projectType), Args: gql.FieldConfigArgument{"id": {Type: nnID}},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.Project(p.Context, pr, argString(p.Args, "id"))
			})},
		"agents": &gql.Field{Type: listOf(agentType), Description: "The project's agents (task:read).",
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.Agents(p.Context, pr)
			})},
		"agentEnv": &gql.Field{Type: listOf(envVarType), Description: "The environment an agent process needs (admin plus every scope an agent holds: it holds the project's secret, which acts as any agent).",
			Args: gql.FieldConfigArgument{
				"name": {Type: nnString, Description: "The agent's name."},
				"url":  {Type: gql.String, Description: "The base URL the agent should call (AGENTDESK_URL)."},
			},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.AgentEnv(p.Context, pr, argString(p.Args, "name"), argString(p.Args, "url"))
			})},
		"tasks": &gql.Field{Type: listOf(taskType), Description: "The project's tasks, oldest first, without their conversation; page with first and after.",
			Args: pageArgs(gql.FieldConfigArgument{
				"status":         {Type: taskStatusEnum},
				"agentId":        {Type: gql.Int},
				"conversationId": {Type: gql.ID, Description: "Only the tasks linked to this conversation (id or uuid); not combinable with status or agentId."},
				"q":              {Type: gql.String, Description: "Only the tasks whose summary or details hold every word of this search (each word by prefix; case and accents ignored). Combines with status, agentId and paging."},
			}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				page, err := pageOf(p.Args)
				if err != nil {
					return nil, err
				}
				if conv, ok := p.Args["conversationId"].(string); ok {
					if p.Args["status"] != nil || p.Args["agentId"] != nil || p.Args["q"] != nil {
						return nil, errs.Invalid("conversationId cannot be combined with status, agentId or q")
					}
					tasks, _, err := svc.ConversationTasks(p.Context, pr, conv, page)
					return tasks, err
				}
				in := service.ListTasksInput{Status: argString(p.Args, "status"), AgentID: optInt64(p.Args, "agentId"), Query: argString(p.Args, "q"), PageInput: page}
				tasks, _, err := svc.ListTasks(p.Context, pr, in)
				return tasks, err
			})},
		"taskCounts": &gql.Field{Type: gql.NewNonNull(taskCountsType), Description: "How many tasks the project has in each status, and in all (one query: what a board shows before it loads any task).",
			Args: gql.FieldConfigArgument{
				"q":       {Type: gql.String, Description: "Count only the tasks this search finds (as tasks(q:))."},
				"agentId": {Type: gql.Int, Description: "Count only the tasks assigned to this agent."},
			},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.CountTasks(p.Context, pr, service.CountTasksInput{Query: argString(p.Args, "q"), AgentID: optInt64(p.Args, "agentId")})
			})},
		"task": &gql.Field{Type: gql.NewNonNull(taskType), Description: "One task, with its conversation.", Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.GetTask(p.Context, pr, argInt64(p.Args, "id"))
			})},
		"tokens": &gql.Field{Type: listOf(tokenType), Description: "The project's tokens, without values (admin).",
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				toks, err := svc.Tokens(p.Context, pr)
				if err != nil {
					return nil, err
				}
				out := make([]tokenView, len(toks))
				for i, t := range toks {
					out[i] = tokenView{Token: t}
				}
				return out, nil
			})},
		"conversations": &gql.Field{Type: listOf(conversationType), Description: "The project's conversations, oldest first.",
			Args: pageArgs(gql.FieldConfigArgument{}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				page, err := pageOf(p.Args)
				if err != nil {
					return nil, err
				}
				convs, _, err := svc.ListConversations(p.Context, pr, page)
				return convs, err
			})},
		"conversation": &gql.Field{Type: gql.NewNonNull(conversationType), Args: gql.FieldConfigArgument{"id": {Type: nnID, Description: "Integer id or uuid."}},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.GetConversation(p.Context, pr, argString(p.Args, "id"))
			})},
		"messages": &gql.Field{Type: listOf(messageType), Description: "A conversation's messages, oldest first, with reaction counts.",
			Args: pageArgs(gql.FieldConfigArgument{"conversationId": {Type: nnID}}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				page, err := pageOf(p.Args)
				if err != nil {
					return nil, err
				}
				msgs, _, err := svc.ListMessages(p.Context, pr, argString(p.Args, "conversationId"), page)
				return msgs, err
			})},
		"mentions": &gql.Field{Type: listOf(messageType), Description: "The messages that mention the caller (the agent, or the person behind the caller), newest first; page with first and before.",
			Args: gql.FieldConfigArgument{
				"first":  {Type: gql.Int, Description: "At most this many messages, 1 to 1000 (default 100)."},
				"before": {Type: gql.Int, Description: "Only messages older than this message id (the last id of the previous page)."},
			},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				first, before := firstBefore(p.Args)
				msgs, _, err := svc.Mentions(p.Context, pr, service.MentionsInput{Limit: first, BeforeID: before})
				return msgs, err
			})},
		"participants": &gql.Field{Type: listOf(participantType), Description: "A conversation's participants, in the order they joined.",
			Args: gql.FieldConfigArgument{"conversationId": {Type: nnID}},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.Participants(p.Context, pr, argString(p.Args, "conversationId"))
			})},
		"reactions": &gql.Field{Type: listOf(reactionType), Description: "Every reaction on a message: who reacted with what.",
			Args: gql.FieldConfigArgument{"messageId": {Type: nnInt}},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.Reactions(p.Context, pr, argInt64(p.Args, "messageId"))
			})},
		"documents": &gql.Field{Type: listOf(documentType), Description: "A conversation's documents, oldest first.",
			Args: pageArgs(gql.FieldConfigArgument{"conversationId": {Type: nnID}}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				page, err := pageOf(p.Args)
				if err != nil {
					return nil, err
				}
				docs, _, err := svc.ListDocuments(p.Context, pr, argString(p.Args, "conversationId"), page)
				return docs, err
			})},
	})})
}

// idempotencyArg is the optional idempotencyKey of the mutations a client may retry
// (createTask, respond, commentTask, createConversation, sendMessage): the service's Idempotency-Key.
func idempotencyArg() *gql.ArgumentConfig {
	return &gql.ArgumentConfig{Type: gql.String, Description: "Makes a retry safe, as REST's Idempotency-Key header: the same key with the same arguments " +
		"returns the first result again and changes nothing; with other arguments it is a conflict. 1 to 128 characters of A-Z a-z 0-9 . _ : -, kept at least 24 hours per project."}
}

// idempotencyKey is the mutation's idempotencyKey, "" when it has none.
func idempotencyKey(args map[string]any) (string, error) {
	key, ok := args["idempotencyKey"].(string)
	if !ok {
		return "", nil
	}
	if key == "" || service.CheckIdempotencyKey(key) != nil {
		return "", errs.Invalid("idempotencyKey must be 1 to 128 characters of A-Z a-z 0-9 . _ : -")
	}
	return key, nil
}

func (b builder) mutation() *gql.Object {
	svc := b.svc
	taskArgs := func(extra gql.FieldConfigArgument) gql.FieldConfigArgument {
		extra["id"] = &gql.ArgumentConfig{Type: nnInt, Description: "The task's id."}
		return extra
	}
	createToken := func(typ string) gql.FieldResolveFn {
		return resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			in := service.CreateTokenInput{Name: argString(p.Args, "name"), Type: typ, Scopes: stringList(p.Args, "scopes")}
			if s := optString(p.Args, "expiresAt"); s != nil {
				at, err := time.Parse(time.RFC3339, *s)
				if err != nil {
					return nil, errs.Invalid("expiresAt %s is not an RFC 3339 time", strconv.Quote(*s))
				}
				in.ExpiresAt = &at
			}
			value, tok, err := svc.CreateToken(p.Context, pr, in)
			if err != nil {
				return nil, err
			}
			return tokenView{Token: *tok, Value: &value}, nil
		})
	}
	tokenArgs := func() gql.FieldConfigArgument {
		return gql.FieldConfigArgument{
			"name":      {Type: nnString, Description: "A label saying what the token is for."},
			"scopes":    {Type: gql.NewNonNull(gql.NewList(nnString)), Description: "Scopes; the caller must hold each one."},
			"expiresAt": {Type: gql.String, Description: "Optional expiry (RFC 3339)."},
		}
	}
	participantArgs := gql.FieldConfigArgument{
		"conversationId": {Type: nnID},
		"kind":           {Type: nnString, Description: "user or agent."},
		"name":           {Type: gql.String, Description: "The user's name, or the agent's."},
		"agentId":        {Type: gql.Int, Description: "For agents: the agent's id (or give its name)."},
	}
	participant := func(p gql.ResolveParams) service.ParticipantInput {
		return service.ParticipantInput{Kind: argString(p.Args, "kind"), Name: argString(p.Args, "name"), AgentID: optInt64(p.Args, "agentId")}
	}
	reactionArgs := gql.FieldConfigArgument{"messageId": {Type: nnInt}, "emoji": {Type: nnString}}
	sendMessage := func(desc string) *gql.Field {
		return &gql.Field{Type: gql.NewNonNull(messageType), Description: desc,
			Args: gql.FieldConfigArgument{"conversationId": {Type: nnID, Description: "Integer id or uuid."}, "message": {Type: nnString}, "idempotencyKey": idempotencyArg()},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				key, err := idempotencyKey(p.Args)
				if err != nil {
					return nil, err
				}
				msg := argString(p.Args, "message")
				return svc.PostMessage(p.Context, pr, argString(p.Args, "conversationId"), service.PostMessageInput{Message: &msg}, key)
			})}
	}

	return gql.NewObject(gql.ObjectConfig{Name: "Mutation", Fields: b.moreMutations(gql.Fields{
		"createAgent": &gql.Field{Type: gql.NewNonNull(agentType), Description: "Registers an agent (admin).", Args: gql.FieldConfigArgument{"name": {Type: nnString}},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.CreateAgent(p.Context, pr, argString(p.Args, "name"))
			})},
		"createTask": &gql.Field{Type: gql.NewNonNull(taskType), Description: "Creates a task: Todo with an agent, Backlog without.",
			Args: gql.FieldConfigArgument{
				"summary":        {Type: nnString},
				"details":        {Type: gql.String},
				"steps":          {Type: gql.NewList(gql.NewNonNull(stepInputType))},
				"agentId":        {Type: gql.Int},
				"taskType":       {Type: gql.String},
				"conversationId": {Type: gql.ID, Description: "Links the task to this conversation (id or uuid)."},
				"requiredSkills": {Type: gql.NewList(nnString), Description: "Names of skills of the project the assignee must have."},
				"idempotencyKey": idempotencyArg(),
			},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				key, err := idempotencyKey(p.Args)
				if err != nil {
					return nil, err
				}
				in := service.CreateTaskInput{Summary: argString(p.Args, "summary"), Details: argString(p.Args, "details"),
					AgentID: optInt64(p.Args, "agentId"), TaskType: argString(p.Args, "taskType"),
					ConversationID: model.Ref(argString(p.Args, "conversationId")), RequiredSkills: stringList(p.Args, "requiredSkills")}
				steps, _ := p.Args["steps"].([]any)
				for _, s := range steps {
					m, _ := s.(map[string]any)
					in.Steps = append(in.Steps, service.StepInput{Title: argString(m, "title")})
				}
				return svc.CreateTask(p.Context, pr, in, key)
			})},
		"setTaskStatus": &gql.Field{Type: gql.NewNonNull(taskType), Description: "Moves a task to any status. With Waiting, waitingDetails and the waiting* arguments are its question: any of them given replaces the whole question.",
			Args: taskArgs(questionArgs(gql.FieldConfigArgument{"status": {Type: gql.NewNonNull(taskStatusEnum)}, "waitingDetails": {Type: gql.String}})),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				q, err := questionOf(p.Args)
				if err != nil {
					return nil, err
				}
				return svc.SetTaskStatus(p.Context, pr, argInt64(p.Args, "id"), argString(p.Args, "status"), optString(p.Args, "waitingDetails"), q, nil)
			})},
		"assignTask": &gql.Field{Type: gql.NewNonNull(taskType), Description: "Assigns a task to an agent, or to nobody when agentId is null or left out. The status does not change.",
			Args: taskArgs(gql.FieldConfigArgument{"agentId": {Type: gql.Int}}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.AssignTask(p.Context, pr, argInt64(p.Args, "id"), optInt64(p.Args, "agentId"), nil)
			})},
		"updateTask": &gql.Field{Type: gql.NewNonNull(taskType), Description: "Changes a task's summary, details or step titles (what is left out stays), with the rules of createTask. steps are the titles in order: the steps already there keep their status, more are added as pending, fewer removes the last ones. Status and agent do not change.",
			Args: taskArgs(gql.FieldConfigArgument{
				"summary": {Type: gql.String},
				"details": {Type: gql.String},
				"steps":   {Type: gql.NewList(gql.NewNonNull(stepInputType))},
			}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				in := service.EditTaskInput{Summary: optString(p.Args, "summary"), Details: optString(p.Args, "details")}
				if raw, ok := p.Args["steps"].([]any); ok {
					steps := make([]service.StepInput, 0, len(raw))
					for _, s := range raw {
						m, _ := s.(map[string]any)
						steps = append(steps, service.StepInput{Title: argString(m, "title")})
					}
					in.Steps = &steps
				}
				return svc.EditTask(p.Context, pr, argInt64(p.Args, "id"), in, nil)
			})},
		"setStepStatus": &gql.Field{Type: gql.NewNonNull(taskType), Description: "Sets the status of a step (0-based index).",
			Args: taskArgs(gql.FieldConfigArgument{"step": {Type: nnInt, Description: "0-based step index."}, "status": {Type: gql.NewNonNull(stepStatusEnum)}}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				step, _ := p.Args["step"].(int)
				return svc.SetStepStatus(p.Context, pr, argInt64(p.Args, "id"), step, argString(p.Args, "status"), nil)
			})},
		"respond": &gql.Field{Type: gql.NewNonNull(taskType), Description: "Answers a Waiting task with one of response (text), choice (one of waitingOptions) or data (the fields of waitingSchema, as JSON text); it goes back to Doing.",
			Args: taskArgs(gql.FieldConfigArgument{"response": {Type: gql.String}, "choice": {Type: gql.String, Description: "One of the task's waitingOptions."},
				"data":           {Type: gql.String, Description: "The fields of the task's waitingSchema, as a JSON object in text."},
				"waitingVersion": {Type: gql.Int, Description: "The waitingVersion answered; a stale one is a conflict."},
				"idempotencyKey": idempotencyArg()}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				key, err := idempotencyKey(p.Args)
				if err != nil {
					return nil, err
				}
				data, err := dataArg(p.Args)
				if err != nil {
					return nil, err
				}
				in := service.RespondInput{Response: argString(p.Args, "response"), Choice: optString(p.Args, "choice"), Data: data, WaitingVersion: optInt64(p.Args, "waitingVersion")}
				return svc.Respond(p.Context, pr, argInt64(p.Args, "id"), in, key, nil)
			})},
		"commentTask": &gql.Field{Type: gql.NewNonNull(taskType), Description: "Adds a comment to a task's conversation, in any status; nothing else changes. Needs task:write.",
			Args: taskArgs(gql.FieldConfigArgument{"content": {Type: nnString, Description: "The comment (Markdown), not blank."}, "idempotencyKey": idempotencyArg()}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				key, err := idempotencyKey(p.Args)
				if err != nil {
					return nil, err
				}
				return svc.CommentTask(p.Context, pr, argInt64(p.Args, "id"), service.CommentInput{Content: optString(p.Args, "content")}, key, nil)
			})},
		"deleteTask": &gql.Field{Type: nnBool, Description: "Deletes a task with its steps and conversation; true when done.",
			Args: taskArgs(gql.FieldConfigArgument{}),
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				if err := svc.DeleteTask(p.Context, pr, argInt64(p.Args, "id"), nil); err != nil {
					return nil, err
				}
				return true, nil
			})},
		"deleteDoneTasks": &gql.Field{Type: nnInt, Description: "Deletes every Done task of the project; returns how many.",
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.DeleteDoneTasks(p.Context, pr)
			})},
		"createPlatformToken": &gql.Field{Type: gql.NewNonNull(tokenType), Description: "Creates a platform token (admin); its value is in token, shown this once.",
			Args: tokenArgs(), Resolve: createToken(model.TokenPlatform)},
		"createDataToken": &gql.Field{Type: gql.NewNonNull(tokenType), Description: "Creates a data token for the vector endpoints (admin); its value is in token, shown this once.",
			Args: tokenArgs(), Resolve: createToken(model.TokenData)},
		"revokeToken": &gql.Field{Type: nnBool, Description: "Revokes a token (admin); it stops working at once.", Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				if err := svc.RevokeToken(p.Context, pr, argInt64(p.Args, "id")); err != nil {
					return nil, err
				}
				return true, nil
			})},
		"createConversation": &gql.Field{Type: gql.NewNonNull(conversationType), Description: "Creates a conversation with its first message; the caller joins it.",
			Args: gql.FieldConfigArgument{"message": {Type: nnString}, "name": {Type: gql.String}, "idempotencyKey": idempotencyArg()},
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				key, err := idempotencyKey(p.Args)
				if err != nil {
					return nil, err
				}
				msg := argString(p.Args, "message")
				return svc.CreateConversation(p.Context, pr, service.CreateConversationInput{Message: &msg, Name: optString(p.Args, "name")}, key)
			})},
		"sendMessage": sendMessage("Posts a message; the poster joins the conversation."),
		"postMessage": sendMessage("The same as sendMessage (its first name)."),
		"addParticipant": &gql.Field{Type: gql.NewNonNull(conversationType), Description: "Adds a user or an agent to a conversation.", Args: participantArgs,
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.AddParticipant(p.Context, pr, argString(p.Args, "conversationId"), participant(p))
			})},
		"removeParticipant": &gql.Field{Type: gql.NewNonNull(conversationType), Description: "Removes a participant from a conversation.", Args: participantArgs,
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.RemoveParticipant(p.Context, pr, argString(p.Args, "conversationId"), participant(p))
			})},
		"addReaction": &gql.Field{Type: gql.NewNonNull(messageType), Description: "Reacts to a message with an emoji.", Args: reactionArgs,
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.AddReaction(p.Context, pr, argInt64(p.Args, "messageId"), argString(p.Args, "emoji"))
			})},
		"removeReaction": &gql.Field{Type: gql.NewNonNull(messageType), Description: "Takes back a reaction.", Args: reactionArgs,
			Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
				return svc.RemoveReaction(p.Context, pr, argInt64(p.Args, "messageId"), argString(p.Args, "emoji"))
			})},
	})})
}
