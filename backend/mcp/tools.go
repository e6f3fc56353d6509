package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
)

// register adds the tools the caller may use, and the task resources.
func (t *tools) register(s *mcp.Server) {
	w := t.who
	if w.has(auth.TaskRead) {
		addTool(s, &mcp.Tool{Name: "list_tasks", Annotations: readOnly("List tasks"),
			Description: "List the tasks of the agentdesk board, oldest first. Use it to find work, or a task's id. " +
				"Filter by status, or (agents) mine=true for the tasks assigned to you. Returns {\"tasks\": [...]}, each with id, summary, status, steps and waiting_details."}, t.listTasks)
		addTool(s, &mcp.Tool{Name: "get_task", Annotations: readOnly("Get a task"),
			Description: "Read one task with its steps and its conversation (questions asked, people's answers, messages). Returns the task."}, t.getTask)
		s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "task", Title: "An agentdesk task", URITemplate: taskURITemplate,
			MIMEType: "application/json", Description: "A task as JSON, with its steps and conversation. Subscribe to be told when it changes."}, t.readTask)
	}
	if w.has(auth.TaskWrite) {
		addTool(s, &mcp.Tool{Name: "create_task", Annotations: &mcp.ToolAnnotations{Title: "Create a task"},
			Description: "Put a new task on the board, e.g. work to hand to a person or to another agent. " +
				"assign_to_me (agents) takes it on yourself (status Todo); agent_id assigns it to that agent; otherwise it goes to the Backlog. Returns the task."}, t.createTask)
		addTool(s, &mcp.Tool{Name: "update_task", Annotations: &mcp.ToolAnnotations{Title: "Update a task", IdempotentHint: true},
			Description: "Report progress on a task: its status (Doing while you work, Done or Failed at the end), its steps' statuses " +
				"(by 0-based index: pending, in_progress, completed, skipped), and a message to the people following it. Returns the task."}, t.updateTask)
	}
	if w.has(auth.TaskRead, auth.TaskWrite) {
		addTool(s, &mcp.Tool{Name: "ask_human", Annotations: &mcp.ToolAnnotations{Title: "Ask a person", IdempotentHint: true},
			Description: "Ask a person a question and wait for the answer: a decision, an approval, a secret or anything only a person knows. " +
				"Without task_id the question becomes a new task in Waiting (assigned to you, if you are an agent), so it reaches the people's Inbox and phones; " +
				"with task_id that task waits for the answer. Offer options (buttons) or a schema (a small form), a deadline (expires_at, on_expiry, default) and the person to ask (ask). " +
				"Waits up to wait_seconds (default 60, at most 600). " +
				"Returns {\"status\":\"answered\",\"answer\":...,\"data\":...,\"task_id\":N} (data: the form's object), or {\"status\":\"waiting\",\"task_id\":N} when no one answered in time: " +
				"then call ask_human again with that task_id and the same question to keep waiting (it never asks twice)."}, t.askHuman)
	}
	if w.has(auth.TaskWrite) && !w.Agent { // people answer agents' questions, not agents
		addTool(s, &mcp.Tool{Name: "answer_question", Annotations: &mcp.ToolAnnotations{Title: "Answer a question"},
			Description: "Answer the question of a task in Waiting (its waiting_details), as a person would from the Inbox: with answer (text), choice (one of its waiting_options) or data (the fields of its waiting_schema). " +
				"The task goes back to Doing and its agent is told. Give waiting_version (from the task) so that the answer never lands on a newer question. Returns the task."}, t.answerQuestion)
	}
	if w.has(auth.MessagingWrite) {
		addTool(s, &mcp.Tool{Name: "post_message", Annotations: &mcp.ToolAnnotations{Title: "Post a message"},
			Description: "Post a message to a conversation (by its id or uuid), or start a new conversation with it when conversation is left out. Returns the message (with its conversationId)."}, t.postMessage)
	}
	if w.has(auth.MessagingRead) {
		addTool(s, &mcp.Tool{Name: "list_conversations", Annotations: readOnly("List conversations"),
			Description: "List the project's conversations, oldest first. Returns {\"conversations\": [...]}."}, t.listConversations)
		addTool(s, &mcp.Tool{Name: "read_messages", Annotations: readOnly("Read messages"),
			Description: "Read a conversation's messages, oldest first; after_id continues after the last one read. Returns {\"messages\": [...]}."}, t.readMessages)
	}
	if w.has(auth.VectorRead) {
		addTool(s, &mcp.Tool{Name: "search_knowledge", Annotations: readOnly("Search the knowledge bases"),
			Description: "Search the project's knowledge bases (documents people shared) for passages about a question. " +
				"Searches every knowledge base unless space_id names one. Returns {\"results\": [...]}, best first, each with documentName, chunk and score."}, t.searchKnowledge)
	}
}

// addTool adds the tool with the input schema of In, in which each property has one
// JSON type. jsonschema.For gives a slice or pointer the type ["null", T], and an `any`
// field none: clients that map tool schemas onto a one-type dialect (Gemini's function
// declarations) refuse those. Leaving a property out is how a client says "none".
func addTool[In, Out any](s *mcp.Server, tool *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("the input schema of %s: %v", tool.Name, err))
	}
	oneType(schema)
	tool.InputSchema = schema
	mcp.AddTool(s, tool, h)
}

// oneType gives each property of s, at any depth, one type: T for ["null", T], and
// "object" where none was given.
func oneType(s *jsonschema.Schema) {
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
		if p.Type == "" && len(p.Types) == 0 {
			p.Type = "object"
		}
		oneType(p)
	}
	if s.Items != nil {
		oneType(s.Items)
	}
}

func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true}
}

type listTasksIn struct {
	Status string `json:"status,omitempty" jsonschema:"only tasks in this status: Backlog, Todo, Doing, Waiting, Done or Failed"`
	Mine   bool   `json:"mine,omitempty" jsonschema:"agents: only the tasks assigned to you"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many tasks (default: all)"`
}

func (t *tools) listTasks(ctx context.Context, _ *mcp.CallToolRequest, in listTasksIn) (*mcp.CallToolResult, any, error) {
	page, err := t.api.ListTasks(ctx, client.ListOptions{Status: in.Status, AssignedMe: in.Mine, Limit: in.Limit})
	if err != nil {
		return result(nil, err)
	}
	return result(map[string]any{"tasks": page.Tasks}, nil)
}

type taskIDIn struct {
	TaskID int64 `json:"task_id" jsonschema:"the task's id"`
}

func (t *tools) getTask(ctx context.Context, _ *mcp.CallToolRequest, in taskIDIn) (*mcp.CallToolResult, any, error) {
	return result(t.api.GetTask(ctx, in.TaskID))
}

type createTaskIn struct {
	Summary    string   `json:"summary" jsonschema:"one line saying what is to be done"`
	Details    string   `json:"details,omitempty" jsonschema:"everything else the one doing it needs to know"`
	Steps      []string `json:"steps,omitempty" jsonschema:"the task's steps, in order, each one line"`
	AssignToMe bool     `json:"assign_to_me,omitempty" jsonschema:"agents: assign the task to yourself"`
	AgentID    int64    `json:"agent_id,omitempty" jsonschema:"assign the task to this agent of the project"`
}

func (t *tools) createTask(ctx context.Context, _ *mcp.CallToolRequest, in createTaskIn) (*mcp.CallToolResult, any, error) {
	nt := client.NewTask{Summary: in.Summary, Details: in.Details, Steps: in.Steps}
	switch {
	case in.AssignToMe && !t.who.Agent:
		return nil, nil, errors.New("assign_to_me is for agents; a token assigns a task with agent_id")
	case in.AssignToMe:
		nt.AgentID = &t.who.AgentID
	case in.AgentID != 0:
		nt.AgentID = &in.AgentID
	}
	return result(t.api.CreateTask(ctx, nt))
}

type stepIn struct {
	Index  int    `json:"index" jsonschema:"the step's 0-based position"`
	Status string `json:"status" jsonschema:"pending, in_progress, completed or skipped"`
}

type updateTaskIn struct {
	TaskID  int64    `json:"task_id" jsonschema:"the task's id"`
	Status  string   `json:"status,omitempty" jsonschema:"the task's new status: Backlog, Todo, Doing, Waiting, Done or Failed (to ask a question, use ask_human)"`
	Steps   []stepIn `json:"steps,omitempty" jsonschema:"step status changes"`
	Message string   `json:"message,omitempty" jsonschema:"a message for the people following the task"`
}

// updateTask is one agent callback for an agent (applied atomically), or the REST
// changes of a token one by one: steps, status, then the message.
func (t *tools) updateTask(ctx context.Context, _ *mcp.CallToolRequest, in updateTaskIn) (*mcp.CallToolResult, any, error) {
	if in.Status == "" && len(in.Steps) == 0 && in.Message == "" {
		return nil, nil, errors.New("nothing to update: give status, steps or message")
	}
	if t.who.Agent {
		cb := client.Callback{Status: in.Status, Message: in.Message}
		for _, st := range in.Steps {
			cb.Steps = append(cb.Steps, client.StepUpdate{Index: st.Index, Status: st.Status})
		}
		return result(t.api.AgentCallback(ctx, in.TaskID, cb))
	}
	var task *client.Task
	var err error
	for _, st := range in.Steps {
		if task, err = t.api.SetStepStatus(ctx, in.TaskID, st.Index, st.Status); err != nil {
			return result(nil, err)
		}
	}
	if in.Status != "" {
		if task, err = t.api.SetStatus(ctx, in.TaskID, in.Status, ""); err != nil {
			return result(nil, err)
		}
	}
	if in.Message != "" {
		task, err = t.api.CommentTask(ctx, in.TaskID, in.Message)
	}
	return result(task, err)
}

type answerIn struct {
	TaskID         int64          `json:"task_id" jsonschema:"the waiting task's id"`
	Answer         string         `json:"answer,omitempty" jsonschema:"the answer to the task's question, as text"`
	Choice         string         `json:"choice,omitempty" jsonschema:"or one of the task's waiting_options"`
	Data           map[string]any `json:"data,omitempty" jsonschema:"or the fields of the task's waiting_schema"`
	WaitingVersion int64          `json:"waiting_version,omitempty" jsonschema:"the task's waiting_version when you read the question"`
}

func (t *tools) answerQuestion(ctx context.Context, _ *mcp.CallToolRequest, in answerIn) (*mcp.CallToolResult, any, error) {
	return result(t.api.Answer(ctx, in.TaskID, client.Answer{Response: in.Answer, Choice: in.Choice, Data: in.Data}, in.WaitingVersion))
}

type postMessageIn struct {
	Conversation string `json:"conversation,omitempty" jsonschema:"the conversation's id or uuid; leave out to start a new conversation"`
	Message      string `json:"message" jsonschema:"the message text"`
	Name         string `json:"name,omitempty" jsonschema:"a new conversation's name"`
}

func (t *tools) postMessage(ctx context.Context, _ *mcp.CallToolRequest, in postMessageIn) (*mcp.CallToolResult, any, error) {
	project := t.who.ProjectID
	if in.Conversation == "" {
		conv, err := t.api.CreateConversation(ctx, project, in.Message, in.Name)
		if err != nil {
			return result(nil, err)
		}
		msgs, err := t.api.ListMessages(ctx, project, conv.UUID, client.Page{})
		if err != nil || len(msgs) == 0 {
			return result(conv, err)
		}
		return result(msgs[len(msgs)-1], nil)
	}
	if in.Name != "" {
		return nil, nil, errors.New("name names a new conversation: leave out conversation, or name")
	}
	return result(t.api.SendMessage(ctx, project, in.Conversation, in.Message))
}

type pageIn struct {
	Limit   int   `json:"limit,omitempty" jsonschema:"at most this many (default: all)"`
	AfterID int64 `json:"after_id,omitempty" jsonschema:"only those after this id"`
}

func (t *tools) listConversations(ctx context.Context, _ *mcp.CallToolRequest, in pageIn) (*mcp.CallToolResult, any, error) {
	convs, err := t.api.ListConversations(ctx, t.who.ProjectID, client.Page{Limit: in.Limit, AfterID: in.AfterID})
	return result(map[string]any{"conversations": orEmpty(convs)}, err)
}

type readMessagesIn struct {
	Conversation string `json:"conversation" jsonschema:"the conversation's id or uuid"`
	pageIn
}

func (t *tools) readMessages(ctx context.Context, _ *mcp.CallToolRequest, in readMessagesIn) (*mcp.CallToolResult, any, error) {
	msgs, err := t.api.ListMessages(ctx, t.who.ProjectID, in.Conversation, client.Page{Limit: in.Limit, AfterID: in.AfterID})
	return result(map[string]any{"messages": orEmpty(msgs)}, err)
}

type searchIn struct {
	Query   string `json:"query" jsonschema:"what to look for, in words"`
	SpaceID int64  `json:"space_id,omitempty" jsonschema:"search only this knowledge base"`
	K       int    `json:"k,omitempty" jsonschema:"how many results (default 5)"`
}

// searchKnowledge searches one knowledge base, or each in turn and keeps the best k.
func (t *tools) searchKnowledge(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
	spaces := []int64{in.SpaceID}
	if in.SpaceID == 0 {
		all, err := t.api.Spaces(ctx)
		if err != nil {
			return result(nil, err)
		}
		spaces = spaces[:0]
		for _, sp := range all {
			spaces = append(spaces, sp.ID)
		}
	}
	k := in.K
	if k <= 0 {
		k = 5
	}
	var hits []client.VectorResult
	for _, id := range spaces {
		rs, err := t.api.Search(ctx, id, in.Query, k)
		if err != nil {
			return result(nil, err)
		}
		hits = append(hits, rs...)
	}
	sortByScore(hits)
	return result(map[string]any{"results": orEmpty(hits[:min(k, len(hits))])}, nil)
}

// orEmpty makes a nil list an empty one, so that it is [] in JSON.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// summaryOf is a question's first line, short enough for a card.
func summaryOf(question string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(question), "\n")
	const max = 120
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	return string([]rune(line)[:max-1]) + "…"
}
