package model

import "time"

// Skill is a named capability of a project; agents have skills, tasks may require them.
type Skill struct {
	ID          int64     `json:"id"`
	ProjectID   string    `json:"project_id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Catch-up policies of a job: what to do with the runs missed while agentdesk was not
// running (or the machine slept).
const (
	CatchUpSkip    = "skip"
	CatchUpRunOnce = "run_once"
)

// Job is a scheduled task template.
type Job struct {
	ID        int64      `json:"id"`
	ProjectID string     `json:"project_id"`
	Name      string     `json:"name"`
	Cron      string     `json:"cron"`
	Timezone  string     `json:"timezone"`
	Summary   string     `json:"summary"`
	Details   string     `json:"details"`
	Steps     []string   `json:"steps"`
	AgentID   *int64     `json:"agent_id"`
	SkillID   *int64     `json:"skill_id"`
	SkillName string     `json:"skill_name"`
	CatchUp   string     `json:"catch_up"`
	Paused    bool       `json:"paused"`
	NextRunAt *time.Time `json:"next_run_at"`
	LastRunAt *time.Time `json:"last_run_at"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// Job run outcomes and triggers.
const (
	RunCreated = "created"
	RunFailed  = "failed"
	RunSkipped = "skipped"

	TriggerSchedule = "schedule"
	TriggerCatchUp  = "catch_up"
	TriggerManual   = "manual"
)

// JobRun is one scheduled (or manual) run of a job and what came of it.
type JobRun struct {
	ID           int64     `json:"id"`
	JobID        int64     `json:"job_id"`
	ScheduledFor time.Time `json:"scheduled_for"`
	RanAt        time.Time `json:"ran_at"`
	Outcome      string    `json:"outcome"`
	TaskID       *int64    `json:"task_id"`
	Reason       string    `json:"reason"`
	Trigger      string    `json:"trigger"`
}

// UsageRecord is one usage report of an agent.
type UsageRecord struct {
	ProjectID    string
	AgentID      int64
	AgentName    string
	TaskID       int64
	Model        string
	InputTokens  int64
	OutputTokens int64
	CostMicros   int64 // millionths of a US dollar
	At           time.Time
}

// UsageRow is usage summed over a group (a day, an agent, a model, or all three).
type UsageRow struct {
	Day          string // YYYY-MM-DD (UTC) when grouped by day
	AgentID      *int64
	AgentName    string
	Model        string
	InputTokens  int64
	OutputTokens int64
	CostMicros   int64
	Reports      int64
}

// Budget is a project's monthly spending limit.
type Budget struct {
	MonthlyMicros int64
	ExceededMonth string // YYYY-MM of the last budget.exceeded event
}

// Activity is one entry of the audit trail.
type Activity struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	ActorKind  string    `json:"actor_kind"`
	Actor      string    `json:"actor"`
	Via        string    `json:"via"`
	Action     string    `json:"action"`
	ObjectType string    `json:"object_type"`
	ObjectID   string    `json:"object_id"`
	EventSeq   int64     `json:"event_seq"`
	// Change says what a task change changed ("status Todo → Doing"), when the event
	// log still holds it and the task's event before; "" otherwise.
	Change string `json:"change,omitempty"`
}
