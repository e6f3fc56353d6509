package service

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// The rules of A2A (the Agent2Agent protocol): every agent of a project is an A2A agent,
// whose tasks are the board's tasks assigned to it. backend/a2a speaks the protocol; what
// a message does, which tasks an agent's endpoint serves and how states map, both ways,
// are decided here (the contract's "Round 3 decisions", "A2A").

// A2AState is the A2A state of a task status: Backlog and Todo are submitted, Doing
// working, Waiting input-required, Done completed, Failed failed.
func A2AState(status string) a2a.TaskState {
	switch status {
	case model.StatusBacklog, model.StatusTodo:
		return a2a.TaskStateSubmitted
	case model.StatusDoing:
		return a2a.TaskStateWorking
	case model.StatusWaiting:
		return a2a.TaskStateInputRequired
	case model.StatusDone:
		return a2a.TaskStateCompleted
	case model.StatusFailed:
		return a2a.TaskStateFailed
	}
	return a2a.TaskStateUnknown
}

// StatusOfA2AState is the task status an A2A state shows as on the board (a remote
// agent's tasks): the way back of A2AState, where the states agentdesk has no status of
// its own for join the nearest (auth-required waits on a person; canceled and rejected
// fail). "" for unknown: the board keeps the status it has.
func StatusOfA2AState(state a2a.TaskState) string {
	switch state {
	case a2a.TaskStateSubmitted:
		return model.StatusTodo
	case a2a.TaskStateWorking:
		return model.StatusDoing
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return model.StatusWaiting
	case a2a.TaskStateCompleted:
		return model.StatusDone
	case a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected:
		return model.StatusFailed
	}
	return ""
}

// A2AEnds reports whether an A2A exchange about a task in this state is over: a stream
// ends there (the task is finished, or waits for the client's next message).
func A2AEnds(state a2a.TaskState) bool {
	return state.Terminal() || state == a2a.TaskStateInputRequired
}

// A2ACanceled is the reason a task canceled over A2A fails with: its last conversation entry.
const A2ACanceled = "canceled"

// A2AView is what A2A shows of a task besides its fields: its state, the text of its
// status message (the question while input-required, the last entry's text once
// failed), and its result (once completed: the agent's last message, sent as an artifact).
type A2AView struct {
	State   a2a.TaskState
	Message string
	Result  string
}

// A2AViewOf is how task t shows to A2A.
func A2AViewOf(t *model.Task) A2AView {
	v := A2AView{State: A2AState(t.Status)}
	switch t.Status {
	case model.StatusWaiting:
		if t.WaitingDetails != nil {
			v.Message = *t.WaitingDetails
		}
	case model.StatusFailed:
		if n := len(t.Conversation); n > 0 {
			v.Message = t.Conversation[n-1].Content
		}
	case model.StatusDone:
		for i := len(t.Conversation) - 1; i >= 0; i-- {
			if t.Conversation[i].Role == model.RoleAssistant {
				v.Result = t.Conversation[i].Content
				break
			}
		}
	}
	return v
}

// A2AAgent is the agent of the project named name, with its skills: what its Agent Card
// shows. The card is public (A2A clients read it before they authenticate), so this
// takes no principal; an unknown project or agent is not found.
func (s *Service) A2AAgent(ctx context.Context, projectID, name string) (*model.Agent, []model.Skill, error) {
	r := s.store.Read()
	agent, err := s.a2aAgent(ctx, r, projectID, name)
	if err != nil {
		return nil, nil, err
	}
	skills, err := r.AgentSkills(ctx, projectID)
	if err != nil {
		return nil, nil, internal("load agent skills", err)
	}
	return agent, skills[agent.ID], nil
}

func (s *Service) a2aAgent(ctx context.Context, r store.Reader, projectID, name string) (*model.Agent, error) {
	agent, err := r.AgentByName(ctx, projectID, name)
	if err := storeError(err, "load agent", func() error { return errs.Missing("no agent %q in project %q", name, projectID) }); err != nil {
		return nil, err
	}
	return agent, nil
}

// a2aTask loads task id if it is assigned to the agent named agentName: an agent's A2A
// endpoint serves its own tasks only; any other is not found.
func (s *Service) a2aTask(ctx context.Context, r store.Reader, p *auth.Principal, agentName string, id int64) (*model.Task, error) {
	agent, err := s.a2aAgent(ctx, r, p.ProjectID, agentName)
	if err != nil {
		return nil, err
	}
	t, err := s.loadTask(ctx, r, p.ProjectID, id)
	if err != nil {
		return nil, err
	}
	if t.AgentID == nil || *t.AgentID != agent.ID {
		return nil, errs.Missing("task %d is not a task of agent %q", id, agentName)
	}
	return t, nil
}

// A2ATask is tasks/get: task id of the agent named agentName (task:read).
func (s *Service) A2ATask(ctx context.Context, p *auth.Principal, agentName string, id int64) (*model.Task, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	return s.a2aTask(ctx, s.store.Read(), p, agentName, id)
}

// A2AMessage is a message/send (or message/stream) to an agent: its text, the task it
// names (nil: none), and its messageId.
type A2AMessage struct {
	Text      string
	TaskID    *int64
	MessageID string
}

// SendA2AMessage is message/send: a message naming no task becomes a new task for the
// agent (its first line the summary, the rest the details); a message naming a task of
// the agent that is input-required (Waiting) answers its question, as a person's
// response does. Any other task takes no message. A repeated messageId returns the
// first answer again (the messageId is the idempotency key).
func (s *Service) SendA2AMessage(ctx context.Context, p *auth.Principal, agentName string, in A2AMessage) (*model.Task, error) {
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return nil, errs.Invalid("the message has no text: send a text part (or a data part)")
	}
	key := "a2a:" + in.MessageID
	if CheckIdempotencyKey(key) != nil {
		key = "" // a messageId that is no idempotency key: the message is not deduplicated
	}
	if in.TaskID == nil {
		if err := require(p, auth.TaskWrite); err != nil {
			return nil, err
		}
		agent, err := s.a2aAgent(ctx, s.store.Read(), p.ProjectID, agentName)
		if err != nil {
			return nil, err
		}
		summary, details := splitSummary(text)
		return s.CreateTask(ctx, p, CreateTaskInput{Summary: summary, Details: details, AgentID: &agent.ID}, key)
	}
	t, err := s.A2ATask(ctx, p, agentName, *in.TaskID)
	if err != nil {
		return nil, err
	}
	if t.Status != model.StatusWaiting {
		return nil, errs.Conflicting("task %d is not waiting for input: its A2A state is %s", t.ID, A2AState(t.Status))
	}
	return s.Respond(ctx, p, t.ID, RespondInput{Response: text, WaitingVersion: &t.WaitingVersion}, key, nil)
}

// splitSummary makes a message's text a task's summary (its first line, cut to
// MaxSummaryLen characters) and details (the rest; the whole text when the line was cut).
func splitSummary(text string) (summary, details string) {
	first, rest, _ := strings.Cut(text, "\n")
	summary, details = strings.TrimSpace(first), strings.TrimSpace(rest)
	if utf8.RuneCountInString(summary) > MaxSummaryLen {
		summary = string([]rune(summary)[:MaxSummaryLen-1]) + "…"
		details = text
	}
	return summary, details
}

// CancelA2ATask is tasks/cancel: the agent's task fails, its conversation saying
// "canceled" (A2A's canceled shows as failed). A task already Done or Failed cannot be
// canceled.
func (s *Service) CancelA2ATask(ctx context.Context, p *auth.Principal, agentName string, id int64) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	var task *model.Task
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		t, err := s.a2aTask(ctx, tx.Reader, p, agentName, id)
		if err != nil {
			return err
		}
		if state := A2AState(t.Status); state.Terminal() {
			return errs.Conflicting("task %d cannot be canceled: it is already %s", id, state)
		}
		setStatus(t, model.StatusFailed, nil, nil)
		task, err = s.saveTask(ctx, tx, t, []model.TaskMessage{{Role: roleOf(p), Content: A2ACanceled}}, s.clock())
		return err
	})
	return task, err
}
