package service

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Bounds on task input, also stated in the OpenAPI document.
const (
	MaxSummaryLen  = 1000
	MaxDetailsLen  = 100_000
	MaxSteps       = 500
	MaxStepLen     = 1000
	MaxTaskTypeLen = 64
	MaxResponseLen = 100_000
	MaxListLimit   = 1000
)

// A step's id is derived from its position (model.StepID), which bounds the steps.
var _ [model.StepIDsPerTask - MaxSteps]struct{}

// Event types of tasks.
const (
	EventTaskCreated = "task.created"
	EventTaskUpdated = "task.updated"
	EventTaskDeleted = "task.deleted"
)

// StepInput is one step of a new task.
type StepInput struct {
	Title string `json:"title"`
}

// CreateTaskInput is a new task.
type CreateTaskInput struct {
	Summary  string      `json:"summary"`
	Details  string      `json:"details"`
	Steps    []StepInput `json:"steps"`
	AgentID  *int64      `json:"agent_id"`
	TaskType string      `json:"taskType"`
	// ConversationID links the task to a conversation of the project (id or uuid).
	ConversationID model.Ref `json:"conversation_id,omitempty"`
	// RequiredSkills names skills of the project an assignee must have (skills.go).
	RequiredSkills []string `json:"required_skills,omitempty"`

	source string // set by the job scheduler (jobs.go): the task's source
}

func (in *CreateTaskInput) validate() error {
	if err := checkText("summary", in.Summary, true, MaxSummaryLen); err != nil {
		return err
	}
	if err := checkText("details", in.Details, false, MaxDetailsLen); err != nil {
		return err
	}
	if err := checkText("taskType", in.TaskType, false, MaxTaskTypeLen); err != nil {
		return err
	}
	if len(in.Steps) > MaxSteps {
		return errs.Invalid("too many steps: %d, at most %d", len(in.Steps), MaxSteps)
	}
	for i, st := range in.Steps {
		if err := checkText("steps["+itoa(i)+"].title", st.Title, true, MaxStepLen); err != nil {
			return err
		}
	}
	return nil
}

// CreateTask makes a task in the principal's project: Todo when it has an agent, else
// Backlog. With an idempotency key, a repeated request returns the first task again.
func (s *Service) CreateTask(ctx context.Context, p *auth.Principal, in CreateTaskInput, idemKey string) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	if err := CheckIdempotencyKey(idemKey); err != nil {
		return nil, err
	}
	return writeOnce(ctx, s, p, idemKey, "create-task", in, func(tx *store.Tx, now time.Time) (*model.Task, error) {
		return s.insertTask(ctx, tx, p, in, now)
	})
}

func (s *Service) insertTask(ctx context.Context, tx *store.Tx, p *auth.Principal, in CreateTaskInput, now time.Time) (*model.Task, error) {
	task := &model.Task{
		ProjectID: p.ProjectID,
		Summary:   in.Summary,
		Details:   in.Details,
		Status:    model.StatusBacklog,
		Source:    model.SourceUser,
		TaskType:  in.TaskType,
		Steps:     make([]model.Step, len(in.Steps)),
		CreatedAt: now,
		UpdatedAt: now,
	}
	if p.Kind == auth.KindAgent {
		task.Source = model.SourceAgent
	}
	if maker := personOf(p); maker != 0 {
		task.CreatedBy = &maker // the person asked when its questions name nobody (asked.go)
	}
	if task.TaskType == "" {
		task.TaskType = model.DefaultTaskType
	}
	for i, st := range in.Steps {
		task.Steps[i] = model.Step{Title: st.Title, Status: model.StepPending}
	}
	var agent *model.Agent
	var budget *model.Budget // the project's, read with the agent (nil: none)
	remote := false          // the agent is a remote A2A agent, to be sent the task (a2aremote.go)
	if in.AgentID != nil {
		var err error
		agent, remote, budget, err = tx.TaskAgent(ctx, p.ProjectID, *in.AgentID)
		if err := agentError(*in.AgentID, err); err != nil {
			return nil, err
		}
		task.AgentID, task.AgentName, task.Status = &agent.ID, agent.Name, model.StatusTodo
	}
	if in.ConversationID != "" {
		id, err := tx.ConversationID(ctx, p.ProjectID, string(in.ConversationID))
		if errors.Is(err, store.ErrNotFound) {
			return nil, errs.Invalid("conversation_id %s is not a conversation of this project", in.ConversationID)
		}
		if err != nil {
			return nil, internal("load conversation", err)
		}
		task.ConversationID = &id
	}
	skillIDs, err := s.newTaskRules(ctx, tx, task, agent, budget, in, now) // skills.go
	if err != nil {
		return nil, err
	}
	if err := tx.InsertTask(ctx, task); err != nil {
		return nil, internal("create task", err)
	}
	if err := tx.SetTaskSkills(ctx, task.ID, skillIDs); err != nil {
		return nil, internal("store required skills", err)
	}
	if remote {
		if err := s.queueRemoteRequest(ctx, tx, task, true, now); err != nil { // a2aremote.go
			return nil, err
		}
	}
	task.Conversation = []model.TaskMessage{}
	task.Derive()
	if err := tx.AppendEvent(ctx, p.ProjectID, EventTaskCreated, model.TaskEvent{Task: task}, now); err != nil {
		return nil, internal("record event", err)
	}
	return task, nil
}

// agentLoader loads an agent of a project: store.Reader, or store.Tx inside a write
// (which keeps the agents it looked up).
type agentLoader interface {
	Agent(ctx context.Context, projectID string, id int64) (*model.Agent, error)
}

// projectAgent loads an agent of the project; any other id is a bad request.
func (s *Service) projectAgent(ctx context.Context, r agentLoader, projectID string, id int64) (*model.Agent, error) {
	agent, err := r.Agent(ctx, projectID, id)
	if err := agentError(id, err); err != nil {
		return nil, err
	}
	return agent, nil
}

// agentError is storeError for loading the agent a request names by id.
func agentError(id int64, err error) error {
	return storeError(err, "load agent", func() error { return errs.Invalid("agent_id %d is not an agent of this project", id) })
}

// GetTask loads one task of the principal's project, with its conversation.
func (s *Service) GetTask(ctx context.Context, p *auth.Principal, id int64) (*model.Task, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	return s.loadTask(ctx, s.store.Read(), p.ProjectID, id)
}

func (s *Service) loadTask(ctx context.Context, r store.Reader, projectID string, id int64) (*model.Task, error) {
	task, err := r.Task(ctx, projectID, id, true)
	return task, taskError(id, "load task", err)
}

// taskError is storeError for a store call on task id.
func taskError(id int64, what string, err error) error {
	return storeError(err, what, func() error { return errs.Missing("task %d not found", id) })
}

// ListTasksInput filters and pages a task list. Limit 0 lists everything.
type ListTasksInput struct {
	Status     string
	AgentID    *int64
	AssignedMe bool // only the calling agent's tasks
	PageInput
	// Query keeps the tasks whose summary or details hold every word of it (by prefix).
	Query string
	// Desc lists newest first; AfterID then pages towards older tasks.
	Desc bool
}

// ListTasks lists the principal's project's tasks, oldest first, without conversations.
// more says whether tasks remain after the last one.
func (s *Service) ListTasks(ctx context.Context, p *auth.Principal, in ListTasksInput) (tasks []model.Task, more bool, err error) {
	return listTasks(ctx, s, p, in, store.Reader.Tasks)
}

// ListTaskVersions is ListTasks reading only each task's id and version, for callers
// that keep tasks encoded (the REST list's cache); TasksByID reads those they lack.
func (s *Service) ListTaskVersions(ctx context.Context, p *auth.Principal, in ListTasksInput) ([]store.TaskVersion, bool, error) {
	return listTasks(ctx, s, p, in, store.Reader.TaskVersions)
}

// TasksByID reads the tasks of ids in the principal's project, without their
// conversations, in no particular order; an id of no task of the project is left out.
func (s *Service) TasksByID(ctx context.Context, p *auth.Principal, ids []int64) ([]model.Task, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	tasks, err := s.store.Read().TasksByID(ctx, p.ProjectID, ids)
	if err != nil {
		return nil, internal("load tasks", err)
	}
	return tasks, nil
}

// listTasks checks a task list's input and reads it with read.
func listTasks[T any](ctx context.Context, s *Service, p *auth.Principal, in ListTasksInput,
	read func(store.Reader, context.Context, store.TaskFilter) ([]T, bool, error)) ([]T, bool, error) {
	f, err := taskFilter(p, in)
	if err != nil {
		return nil, false, err
	}
	if f.Query != "" {
		if err := s.IndexTaskSearch(ctx); err != nil {
			return nil, false, internal("index tasks for search", err)
		}
	}
	tasks, more, err := read(s.store.Read(), ctx, f)
	if err != nil {
		return nil, false, internal("list tasks", err)
	}
	return tasks, more, nil
}

// taskFilter checks a task list's input and the caller's right to it.
func taskFilter(p *auth.Principal, in ListTasksInput) (store.TaskFilter, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return store.TaskFilter{}, err
	}
	if in.Status != "" && !model.IsTaskStatus(in.Status) {
		return store.TaskFilter{}, errs.Invalid("status %q is not a task status; use one of Backlog, Todo, Doing, Waiting, Done, Failed", in.Status)
	}
	if err := in.validate(); err != nil {
		return store.TaskFilter{}, err
	}
	if err := checkTaskSearch(in.Query); err != nil {
		return store.TaskFilter{}, err
	}
	f := store.TaskFilter{Query: in.Query, ProjectID: p.ProjectID, Status: in.Status, AgentID: in.AgentID, AfterID: in.AfterID, Limit: in.Limit, Desc: in.Desc}
	if in.AssignedMe {
		if p.Kind != auth.KindAgent {
			return store.TaskFilter{}, errs.Invalid("assigned=me is for agents; filter by agent_id instead")
		}
		f.AgentID = &p.AgentID
	}
	return f, nil
}

// TaskCounts is the number of the project's tasks in each status (every status is
// present), with their total: what a board shows before it loads any task.
type TaskCounts struct {
	Backlog int64 `json:"Backlog"`
	Todo    int64 `json:"Todo"`
	Doing   int64 `json:"Doing"`
	Waiting int64 `json:"Waiting"`
	Done    int64 `json:"Done"`
	Failed  int64 `json:"Failed"`
	Total   int64 `json:"total"`
}

// IndexTaskSearch indexes for search the tasks written, changed or deleted since the last
// pass (store.IndexTaskSearch), 5,000 a write so that other writes interleave. It writes
// only when some are waiting. The background runner (package jobs) calls it every
// second, and every search first, so that a search sees every change acknowledged
// before it.
func (s *Service) IndexTaskSearch(ctx context.Context) error {
	behind, err := s.store.Read().TaskSearchBehind(ctx)
	for behind && err == nil {
		err = s.store.Write(ctx, s.author(nil), func(tx *store.Tx) (err error) {
			behind, err = tx.IndexTaskSearch(ctx, 5000)
			return err
		})
	}
	return err
}

// MaxSearchLen bounds a task search's text.
const MaxSearchLen = 500

// checkTaskSearch checks a task search (q): "" is no search; else it needs a word.
func checkTaskSearch(q string) error {
	if q == "" {
		return nil
	}
	if len(q) > MaxSearchLen {
		return errs.Invalid("q is too long: %d bytes, at most %d", len(q), MaxSearchLen)
	}
	if len(store.TaskSearchTerms(q)) == 0 {
		return errs.Invalid("q must hold a word (letters or digits) to search for")
	}
	return nil
}

// CountTasksInput narrows the counts: a search, an agent's tasks.
type CountTasksInput struct {
	Query   string
	AgentID *int64
}

// CountTasks counts the principal's project's tasks per status, in one query; with a
// search, only the tasks it finds; with an agent, only its tasks.
func (s *Service) CountTasks(ctx context.Context, p *auth.Principal, in CountTasksInput) (*TaskCounts, error) {
	query := in.Query
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	if err := checkTaskSearch(query); err != nil {
		return nil, err
	}
	if query != "" {
		if err := s.IndexTaskSearch(ctx); err != nil {
			return nil, internal("index tasks for search", err)
		}
	}
	m, err := s.store.Read().TaskCounts(ctx, store.TaskFilter{ProjectID: p.ProjectID, Query: query, AgentID: in.AgentID})
	if err != nil {
		return nil, internal("count tasks", err)
	}
	c := &TaskCounts{Backlog: m[model.StatusBacklog], Todo: m[model.StatusTodo], Doing: m[model.StatusDoing],
		Waiting: m[model.StatusWaiting], Done: m[model.StatusDone], Failed: m[model.StatusFailed]}
	for _, n := range m {
		c.Total += n
	}
	return c, nil
}

// updateTask is the shape of every task change: load the task in the write, check the
// request's If-Match (precondition.go), let change alter it, save it, append the event,
// and return the task as it now is.
func (s *Service) updateTask(ctx context.Context, p *auth.Principal, id int64, ifMatch *TaskPrecondition, change func(tx *store.Tx, t *model.Task) error) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	var task *model.Task
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		var err error
		if task, err = s.loadTask(ctx, tx.Reader, p.ProjectID, id); err != nil {
			return err
		}
		if err := ifMatch.check(id, task.Version); err != nil {
			return err
		}
		if err := change(tx, task); err != nil {
			return err
		}
		task, err = s.saveTask(ctx, tx, task, nil, s.clock())
		return err
	})
	if err != nil {
		return nil, err
	}
	return task, nil
}

// saveTask writes a changed task, appends entries (if any) to its conversation, records
// the task.updated event, and returns the task as stored: the end of every task change.
// The event carries the task without its conversation and the entries this change
// added (model.TaskEvent), so that events stay as small as the change.
func (s *Service) saveTask(ctx context.Context, tx *store.Tx, t *model.Task, entries []model.TaskMessage, now time.Time) (*model.Task, error) {
	t.UpdatedAt = now
	if err := tx.UpdateTask(ctx, t); err != nil {
		return nil, internal("update task", err)
	}
	for i := range entries {
		entry := &entries[i]
		// Its author is the actor of the change, named as the activity trail names
		// them: the thread says "answered by Dana" exactly when the trail does.
		entry.CreatedAt, entry.Author = now, tx.By().Actor.Name
		if err := tx.AppendTaskMessage(ctx, t.ID, *entry); err != nil {
			return nil, internal("append to the conversation", err)
		}
	}
	// t already holds every change (the callers apply each one to it as they write it),
	// so it is the stored task: no need to read it back.
	t.Conversation = append(t.Conversation, entries...)
	t.Derive()
	if err := tx.AppendEvent(ctx, t.ProjectID, EventTaskUpdated, model.TaskEvent{Task: t, Appended: entries}, now); err != nil {
		return nil, err
	}
	return t, nil
}

// setStatus moves a task to status. Every new question bumps waiting_version: entering
// Waiting, or other waiting details or another question (q) while it stays in Waiting,
// so that an answer to the earlier question is refused (Respond). Waiting details or a
// question given replace the question's structure (nil q: none); neither keeps it.
// Leaving Waiting clears the question. Every task change (REST, agent callback, GraphQL)
// goes through here.
func setStatus(t *model.Task, status string, waitingDetails *string, q *Question) {
	if status == model.StatusWaiting {
		asked := waitingDetails != nil || q != nil
		changed := waitingDetails != nil && (t.WaitingDetails == nil || *t.WaitingDetails != *waitingDetails) ||
			asked && !q.sameAs(t)
		if t.Status != model.StatusWaiting || changed {
			t.WaitingVersion++
		}
		if waitingDetails != nil {
			t.WaitingDetails = waitingDetails
		}
		if asked {
			q.applyTo(t)
		}
	} else {
		t.ClearQuestion()
	}
	t.Status = status
}

// roleOf is the conversation role of what p writes: agents are the assistant, everyone
// else (people, tokens, the local owner) the user.
func roleOf(p *auth.Principal) string {
	if p != nil && p.Kind == auth.KindAgent {
		return model.RoleAssistant
	}
	return model.RoleUser
}

// SetTaskStatus moves a task to any status. waitingDetails and q, if given, are what the
// task asks when the status is Waiting (questions.go).
func (s *Service) SetTaskStatus(ctx context.Context, p *auth.Principal, id int64, status string, waitingDetails *string, q *Question, ifMatch *TaskPrecondition) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	if !model.IsTaskStatus(status) {
		return nil, errs.Invalid("status %q is not a task status; use one of Backlog, Todo, Doing, Waiting, Done, Failed", status)
	}
	q = q.Given()
	if err := checkWaiting(status, waitingDetails, q, s.clock()); err != nil {
		return nil, err
	}
	return s.updateTask(ctx, p, id, ifMatch, func(_ *store.Tx, t *model.Task) error {
		setStatus(t, status, waitingDetails, q)
		return nil
	})
}

// AssignTask gives a task to an agent of the project, or to nobody when agentID is nil.
// The status does not change.
func (s *Service) AssignTask(ctx context.Context, p *auth.Principal, id int64, agentID *int64, ifMatch *TaskPrecondition) (*model.Task, error) {
	return s.updateTask(ctx, p, id, ifMatch, func(tx *store.Tx, t *model.Task) error {
		if agentID == nil {
			t.AgentID, t.AgentName = nil, ""
			return s.queueRemoteRequest(ctx, tx, t, false, s.clock())
		}
		agent, err := s.projectAgent(ctx, tx, p.ProjectID, *agentID)
		if err != nil {
			return err
		}
		if err := checkAgentSkills(ctx, tx.Reader, agent, t.RequiredSkills); err != nil { // skills.go
			return err
		}
		t.AgentID, t.AgentName = &agent.ID, agent.Name
		return s.queueRemoteRequest(ctx, tx, t, false, s.clock()) // a2aremote.go
	})
}

// SetStepStatus sets the status of step stepNum (0-based) of a task. It accepts the step
// vocabulary and Todo, Doing, Done.
func (s *Service) SetStepStatus(ctx context.Context, p *auth.Principal, id int64, stepNum int, status string, ifMatch *TaskPrecondition) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	stored, ok := model.ParseStepStatus(status)
	if !ok {
		return nil, errs.Invalid("step status %q is not valid; use one of pending, in_progress, completed, skipped", status)
	}
	if stepNum < 0 {
		return nil, errs.Invalid("step number must be 0 or more (steps are numbered from 0)")
	}
	return s.updateTask(ctx, p, id, ifMatch, func(tx *store.Tx, t *model.Task) error {
		if stepNum >= len(t.Steps) {
			return errs.Missing("task %d has no step %d: it has %d steps, numbered from 0", id, stepNum, len(t.Steps))
		}
		if err := tx.UpdateStepStatus(ctx, id, stepNum, stored); err != nil {
			return internal("update step", err)
		}
		t.Steps[stepNum].Status = stored
		return nil
	})
}

// RespondInput answers a Waiting task, in one of three ways: text (Response), one of
// its options (Choice), or the fields of its form (Data).
type RespondInput struct {
	Response       string         `json:"response"`
	Choice         *string        `json:"choice,omitempty"`
	Data           map[string]any `json:"data,omitempty"`
	WaitingVersion *int64         `json:"waiting_version,omitempty"`
}

// Respond answers the question a Waiting task asks: the answer joins the conversation as
// a user message (answerEntry, questions.go) and the task goes back to Doing. A task not
// Waiting, or a waiting_version the task has moved past, is a conflict.
func (s *Service) Respond(ctx context.Context, p *auth.Principal, id int64, in RespondInput, idemKey string, ifMatch *TaskPrecondition) (*model.Task, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := CheckIdempotencyKey(idemKey); err != nil {
		return nil, err
	}
	input := struct {
		ID int64 `json:"id"`
		RespondInput
	}{id, in}
	return writeOnce(ctx, s, p, idemKey, "respond", input, func(tx *store.Tx, now time.Time) (*model.Task, error) {
		t, err := s.loadTask(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return nil, err
		}
		if err := ifMatch.check(id, t.Version); err != nil {
			return nil, err
		}
		if t.Status != model.StatusWaiting {
			return nil, errs.Conflicting("task %d is not waiting for a response (its status is %s)", id, t.Status)
		}
		if in.WaitingVersion != nil && *in.WaitingVersion != t.WaitingVersion {
			return nil, errs.Conflicting("task %d has moved on: this response answers waiting_version %d, the task is at %d", id, *in.WaitingVersion, t.WaitingVersion)
		}
		answer, err := answerEntry(t, in)
		if err != nil {
			return nil, err
		}
		if err := s.queueRemoteAnswer(ctx, tx, t, answer.Content, now); err != nil { // a2aremote.go: a remote agent's question
			return nil, err
		}
		setStatus(t, model.StatusDoing, nil, nil)
		return s.saveTask(ctx, tx, t, []model.TaskMessage{answer}, now)
	})
}

// DeleteTask removes a task with its steps and conversation.
func (s *Service) DeleteTask(ctx context.Context, p *auth.Principal, id int64, ifMatch *TaskPrecondition) error {
	if err := require(p, auth.TaskWrite); err != nil {
		return err
	}
	now := s.clock()
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if ifMatch != nil {
			version, err := tx.TaskVersion(ctx, p.ProjectID, id)
			if err != nil {
				return taskError(id, "load task", err)
			}
			if err := ifMatch.check(id, version); err != nil {
				return err
			}
		}
		if err := taskError(id, "delete task", tx.DeleteTask(ctx, p.ProjectID, id)); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventTaskDeleted, map[string]int64{"id": id}, now)
	})
}

// DeleteDoneTasks removes every Done task of the principal's project and returns how many.
func (s *Service) DeleteDoneTasks(ctx context.Context, p *auth.Principal) (int, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return 0, err
	}
	// In writes of deleteDoneBatch tasks: a write holds its events in memory until it
	// commits, and the other writes wait behind it, so one write for 900,000 Done tasks
	// would take hundreds of MB and stall every other write for its whole length.
	total := 0
	for {
		now := s.clock()
		var n int
		err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
			ids, err := tx.DeleteTasksWithStatus(ctx, p.ProjectID, model.StatusDone, deleteDoneBatch)
			if err != nil {
				return internal("delete done tasks", err)
			}
			for _, id := range ids {
				if err := tx.AppendEvent(ctx, p.ProjectID, EventTaskDeleted, map[string]int64{"id": id}, now); err != nil {
					return err
				}
			}
			n = len(ids)
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < deleteDoneBatch {
			return total, nil
		}
	}
}

// deleteDoneBatch is how many tasks one write of DeleteDoneTasks removes at most.
var deleteDoneBatch = 5000

func itoa(i int) string { return strconv.Itoa(i) }
