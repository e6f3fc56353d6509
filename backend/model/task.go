package model

import (
	"encoding/json"
	"strconv"
	"time"
)

// Task statuses, case-sensitive as the spec writes them.
const (
	StatusBacklog = "Backlog"
	StatusTodo    = "Todo"
	StatusDoing   = "Doing"
	StatusWaiting = "Waiting"
	StatusDone    = "Done"
	StatusFailed  = "Failed"
)

// TaskStatuses lists every task status in board order.
var TaskStatuses = []string{StatusBacklog, StatusTodo, StatusDoing, StatusWaiting, StatusDone, StatusFailed}

// IsTaskStatus reports whether s is one of the task statuses.
func IsTaskStatus(s string) bool {
	for _, v := range TaskStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// Step statuses. Requests may also use the task vocabulary; see ParseStepStatus.
const (
	StepPending    = "pending"
	StepInProgress = "in_progress"
	StepCompleted  = "completed"
	StepSkipped    = "skipped"
)

// ParseStepStatus maps a requested step status to the stored one. It accepts the step
// vocabulary and, as the contract allows, Todo, Doing and Done.
func ParseStepStatus(s string) (string, bool) {
	switch s {
	case StepPending, StepInProgress, StepCompleted, StepSkipped:
		return s, true
	case StatusTodo:
		return StepPending, true
	case StatusDoing:
		return StepInProgress, true
	case StatusDone:
		return StepCompleted, true
	}
	return "", false
}

// Task sources.
const (
	SourceUser  = "user"
	SourceAgent = "agent"
	SourceJob   = "job"
)

// DefaultTaskType is the taskType of a task whose request names none.
const DefaultTaskType = "standard"

// Task is one unit of work, as every Task response shows it.
type Task struct {
	ID             int64         `json:"id"`
	ProjectID      string        `json:"project_id"`
	AgentID        *int64        `json:"agent_id"`
	AgentName      string        `json:"agent_name"`
	ConversationID *int64        `json:"conversation_id"` // the linked conversation, if any
	Summary        string        `json:"summary"`
	Details        string        `json:"details"`
	Steps          []Step        `json:"steps"`
	Conversation   []TaskMessage `json:"conversation,omitzero"` // nil in lists, [] when empty
	Status         string        `json:"status"`
	Source         string        `json:"source"`
	TaskType       string        `json:"taskType"`
	RequiredSkills []string      `json:"required_skills"` // names of the skills an assignee must have
	CurrentStepNum int           `json:"current_step_num"`
	IsActive       bool          `json:"is_active"`
	IsWaiting      bool          `json:"is_waiting"`
	WaitingDetails *string       `json:"waiting_details"`
	WaitingVersion int64         `json:"waiting_version"`
	// The question's structure, deadline and person asked (service/questions.go says the
	// rules); like WaitingDetails, set only while Waiting.
	WaitingOptions   []string        `json:"waiting_options"`    // the answers to pick from
	WaitingSchema    json.RawMessage `json:"waiting_schema"`     // the form an answer fills
	WaitingExpiresAt *time.Time      `json:"waiting_expires_at"` // the deadline
	WaitingOnExpiry  *string         `json:"waiting_on_expiry"`  // fail or default
	WaitingDefault   json.RawMessage `json:"waiting_default"`    // the answer given at the deadline
	WaitingAsk       *string         `json:"waiting_ask"`        // the email of the person asked
	CreatedAt        time.Time       `json:"created_at"`
	UpdatedAt        time.Time       `json:"updated_at"`
	// BlockedReason is set only in the answer that created the task, when a rule kept
	// it out of Todo (the project's monthly budget is spent): it stays in Backlog.
	BlockedReason string `json:"blocked_reason,omitempty"`
	// CreatedBy is the user who created the task (themselves or by a token they made);
	// nil when no person did (an agent, a job, the local owner, a token nobody made).
	CreatedBy *int64 `json:"-"`
	// Version counts the changes of the task (stored; 1 when created). 0 means unknown:
	// a task decoded from JSON, such as a replayed idempotent answer.
	Version int64 `json:"-"`
	// ETag is the task's entity tag, as REST sends it in the ETag header: derived from
	// ID and Version on the server (Derive), taken from the header by the Go client; ""
	// when unknown. Clients send it back in If-Match and If-None-Match.
	ETag string `json:"-"`
}

// TaskETag is the strong entity tag of version version of task id. Ids are never reused
// and every change bumps the version, so a tag names one state of one task.
func TaskETag(id, version int64) string {
	return `"` + strconv.FormatInt(id, 10) + "." + strconv.FormatInt(version, 10) + `"`
}

// StepIDsPerTask is how many step ids each task has: a step's id is derived from its
// task's id and its position (StepID), so a task can have at most this many steps.
const StepIDsPerTask = 1000

// StepID is the id of the step at position (0-based) of task taskID. Steps are stored
// by task and position; the id is not stored.
func StepID(taskID int64, position int) int64 { return taskID*StepIDsPerTask + int64(position) }

// Step is one ordered subtask of a task.
type Step struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// Conversation roles of a task.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// TaskMessage is one entry of a task's conversation.
type TaskMessage struct {
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	// Author is who wrote it: the person, token, agent or local owner, named as the
	// activity trail names them; "" for entries written before authors were kept.
	Author string `json:"author"`
	// Question is, on an answer (respond), the question it answered: the task's
	// waiting_details at that moment. Absent on every other entry.
	Question string `json:"question,omitempty"`
	// Data is, on an answer given as a choice or a form, that answer as JSON (a string
	// or an object); null for text. Content then holds it as readable text.
	Data json.RawMessage `json:"data"`
}

// ClearQuestion removes what the task waits for: its question and the question's
// structure, deadline and person asked.
func (t *Task) ClearQuestion() {
	t.WaitingDetails, t.WaitingOptions, t.WaitingSchema, t.WaitingExpiresAt = nil, nil, nil, nil
	t.WaitingOnExpiry, t.WaitingDefault, t.WaitingAsk = nil, nil, nil
}

// Derive sets the fields that follow from the others.
func (t *Task) Derive() {
	t.IsActive = t.Status == StatusDoing
	t.IsWaiting = t.Status == StatusWaiting
	if !t.IsWaiting {
		t.ClearQuestion()
	}
	if t.Steps == nil {
		t.Steps = []Step{}
	}
	if t.RequiredSkills == nil {
		t.RequiredSkills = []string{}
	}
	t.CurrentStepNum = len(t.Steps)
	for i, s := range t.Steps {
		if s.Status == StepPending || s.Status == StepInProgress {
			t.CurrentStepNum = i
			break
		}
	}
	if t.Version > 0 {
		t.ETag = TaskETag(t.ID, t.Version)
	}
}
