package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/model"
)

// ask_human's wait, in seconds.
const (
	DefaultWaitSeconds = 60
	MaxWaitSeconds     = 600
)

// progressEvery is how often a waiting ask_human tells the client it is still waiting.
var progressEvery = 5 * time.Second

// pollEvery is how often a wait reads the task while its change feed is down.
var pollEvery = 2 * time.Second

type askIn struct {
	Question    string   `json:"question" jsonschema:"the question, written for a person who has not followed your work"`
	Options     []string `json:"options,omitempty" jsonschema:"1 to 10 answers to offer as buttons; the answer is then one of them"`
	Schema      any      `json:"schema,omitempty" jsonschema:"the form of a structured answer: an object schema of string, number, integer and boolean properties, as MCP elicitation allows; the answer's data then fills it"`
	ExpiresAt   string   `json:"expires_at,omitempty" jsonschema:"a deadline, RFC 3339: when it passes unanswered the task fails, or with on_expiry default is answered with default"`
	OnExpiry    string   `json:"on_expiry,omitempty" jsonschema:"fail (the default) or default"`
	Default     any      `json:"default,omitempty" jsonschema:"with on_expiry default: the answer given at the deadline (one of the options, the form's object, or a text)"`
	Ask         string   `json:"ask,omitempty" jsonschema:"the email of the person to ask; by default the task's creator, else every member who may write tasks"`
	TaskID      int64    `json:"task_id,omitempty" jsonschema:"the task the question is about; an earlier waiting answer's task_id to keep waiting"`
	WaitSeconds *int     `json:"wait_seconds,omitempty" jsonschema:"how long to wait for the answer, 0 to 600 (default 60)"`
}

// structure is the question's structure as the server takes it (it checks it).
func (in askIn) structure() (client.Question, error) {
	q := client.Question{Options: in.Options, OnExpiry: in.OnExpiry, Ask: in.Ask}
	var err error
	if in.Schema != nil {
		if q.Schema, err = json.Marshal(in.Schema); err != nil {
			return q, fmt.Errorf("schema: %w", err)
		}
	}
	if in.Default != nil {
		if q.Default, err = json.Marshal(in.Default); err != nil {
			return q, fmt.Errorf("default: %w", err)
		}
	}
	if in.ExpiresAt != "" {
		at, err := time.Parse(time.RFC3339, in.ExpiresAt)
		if err != nil {
			return q, fmt.Errorf("expires_at %q is not RFC 3339 (such as 2026-01-05T17:00:00Z)", in.ExpiresAt)
		}
		q.ExpiresAt = &at
	}
	return q, nil
}

// Answered and Waiting are ask_human's results.
type Answered struct {
	Status string `json:"status"` // "answered"
	Answer string `json:"answer"`
	Data   any    `json:"data"` // a form's answer (the object); null for text and a choice
	TaskID int64  `json:"task_id"`
}

type Waiting struct {
	Status string `json:"status"` // "waiting"
	TaskID int64  `json:"task_id"`
}

// question is a question put to a person: its task, and where its answer will be.
type question struct {
	text    string
	taskID  int64
	version int64 // the task's waiting_version while it waits for this question
	from    int   // the answer is an entry of the conversation from this index on
}

func (t *tools) askHuman(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
	wait := DefaultWaitSeconds
	if in.WaitSeconds != nil {
		wait = *in.WaitSeconds
	}
	switch {
	case in.Question == "":
		return nil, nil, errors.New("question is empty: write the question for the person")
	case wait < 0 || wait > MaxWaitSeconds:
		return nil, nil, fmt.Errorf("wait_seconds is %d: it must be between 0 and %d", wait, MaxWaitSeconds)
	}
	// Follow the task changes before asking, so that no answer comes unseen between.
	feedCtx, stop := context.WithCancel(ctx)
	defer stop()
	feed, err := t.changes(feedCtx)
	if err != nil {
		feed = nil // read the task every pollEvery instead
	}
	structure, err := in.structure()
	if err != nil {
		return nil, nil, err
	}
	task, q, err := t.ask(ctx, in, structure)
	if err != nil {
		return result(nil, err)
	}
	deadline := time.NewTimer(time.Duration(wait) * time.Second)
	defer deadline.Stop()
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	start := time.Now()
	t.notifyProgress(ctx, req, q, 0, wait)
	for {
		if res, done, err := q.outcome(task); done || err != nil {
			return res, nil, err
		}
		select {
		case id, ok := <-feed:
			if !ok {
				feed = nil
				continue
			}
			if id != q.taskID {
				continue
			}
		case <-poll.C:
			if feed != nil {
				continue
			}
		case <-progress.C:
			t.notifyProgress(ctx, req, q, time.Since(start), wait)
			continue
		case <-deadline.C:
			return nil, Waiting{Status: "waiting", TaskID: q.taskID}, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if task, err = t.api.GetTask(ctx, q.taskID); err != nil {
			return result(nil, err)
		}
	}
}

// ask puts the question: on a new task, or on in.TaskID unless that task already waits
// for this very question (then it waits on it, never asking twice).
func (t *tools) ask(ctx context.Context, in askIn, structure client.Question) (*client.Task, *question, error) {
	if in.TaskID == 0 {
		task, err := t.newQuestionTask(ctx, in.Question)
		if err != nil {
			return nil, nil, err
		}
		return t.setWaiting(ctx, task.ID, in.Question, structure)
	}
	task, err := t.api.GetTask(ctx, in.TaskID)
	if err != nil {
		return nil, nil, err
	}
	waiting := task.Status == model.StatusWaiting && task.WaitingDetails != nil && *task.WaitingDetails == in.Question
	if waiting || lastIsAnswerTo(task, in.Question) {
		return task, &question{text: in.Question, taskID: task.ID, version: task.WaitingVersion, from: answerFrom(task, waiting)}, nil
	}
	return t.setWaiting(ctx, task.ID, in.Question, structure)
}

// newQuestionTask makes the task a question without a task becomes: assigned to the
// asking agent, or to no one for a token.
func (t *tools) newQuestionTask(ctx context.Context, text string) (*client.Task, error) {
	nt := client.NewTask{Summary: summaryOf(text)}
	if nt.Summary != text {
		nt.Details = text
	}
	if t.who.Agent {
		nt.AgentID = &t.who.AgentID
	}
	return t.api.CreateTask(ctx, nt)
}

// setWaiting puts the task in Waiting on the question: an agent's callback, or a
// token's status change.
func (t *tools) setWaiting(ctx context.Context, id int64, text string, structure client.Question) (*client.Task, *question, error) {
	var task *client.Task
	var err error
	if t.who.Agent {
		task, err = t.api.AgentCallback(ctx, id, client.Callback{WaitingDetails: text, Question: structure})
	} else {
		task, err = t.api.Ask(ctx, id, text, structure)
	}
	if err != nil {
		return nil, nil, err
	}
	return task, &question{text: text, taskID: id, version: task.WaitingVersion, from: len(task.Conversation)}, nil
}

// lastIsAnswerTo reports whether the task's newest entry answers the question: it was
// answered after the last ask timed out, and nothing has happened since.
func lastIsAnswerTo(task *client.Task, text string) bool {
	n := len(task.Conversation)
	return task.Status != model.StatusWaiting && n > 0 &&
		task.Conversation[n-1].Role == model.RoleUser && task.Conversation[n-1].Question == text
}

func answerFrom(task *client.Task, waiting bool) int {
	if waiting {
		return len(task.Conversation)
	}
	return len(task.Conversation) - 1 // lastIsAnswerTo: the newest entry
}

// outcome is the answer to q once the task holds it; done is false while the task still
// waits for q. A task that left the question without an answer is an error.
func (q *question) outcome(task *client.Task) (*mcp.CallToolResult, bool, error) {
	if task.Status == model.StatusWaiting && task.WaitingVersion == q.version {
		return nil, false, nil
	}
	for _, e := range task.Conversation[min(q.from, len(task.Conversation)):] {
		if e.Role == model.RoleUser && e.Question == q.text {
			var data any
			if e.Data != nil {
				data = e.Data
			}
			return structured(Answered{Status: "answered", Answer: e.Content, Data: data, TaskID: task.ID}), true, nil
		}
	}
	return nil, true, fmt.Errorf("task %d stopped waiting for this question without an answer: it is now %s; get_task shows what happened", task.ID, task.Status)
}

// structured is a tool result of v, as the SDK makes it from a handler's output.
func structured(v any) *mcp.CallToolResult {
	text, _ := asJSON(v)
	return &mcp.CallToolResult{StructuredContent: v, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// notifyProgress tells a client that asked for progress how long the question has waited.
func (t *tools) notifyProgress(ctx context.Context, req *mcp.CallToolRequest, q *question, waited time.Duration, wait int) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return
	}
	req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
		Progress: waited.Seconds(), Total: float64(wait),
		Message: fmt.Sprintf("waiting for a person to answer on task %d", q.taskID)})
}

func sortByScore(hits []client.VectorResult) {
	slices.SortStableFunc(hits, func(a, b client.VectorResult) int { return cmp.Compare(b.Score, a.Score) })
}
