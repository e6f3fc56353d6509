package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // IANA time zones even where the system has none (Windows, scratch images)

	"github.com/robfig/cron/v3"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Bounds and timing of jobs.
const (
	MaxJobNameLen = 200
	MaxCronLen    = 200
	// MissedAfter is how late a scheduled run may be handled and still count as on
	// time. A run later than that (the machine slept), or due before the scheduler
	// started (agentdesk was not running), was missed: the job's catch-up policy decides.
	MissedAfter = 2 * time.Minute
	// maxMissedRecorded bounds the skipped runs recorded one by one for one catch-up;
	// beyond it one more row says how many others were skipped.
	maxMissedRecorded = 1000
	maxMissedCounted  = 1_000_000
)

// Event types of jobs.
const (
	EventJobCreated = "job.created"
	EventJobUpdated = "job.updated"
	EventJobDeleted = "job.deleted"
	EventJobRan     = "job.ran"
)

// jobsState is the service's side of the scheduler: a signal that the schedule changed.
type jobsState struct {
	once sync.Once
	wake chan struct{}
}

func (j *jobsState) ch() chan struct{} {
	j.once.Do(func() { j.wake = make(chan struct{}, 1) })
	return j.wake
}

// JobsChanged receives a value whenever a job's schedule may have changed, so that the
// scheduler looks again at when to wake.
func (s *Service) JobsChanged() <-chan struct{} { return s.jobs.ch() }

func (s *Service) jobsChanged() {
	select {
	case s.jobs.ch() <- struct{}{}:
	default:
	}
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// The cron library's errors name Go internals ("failed to parse int from x:
// strconv.Atoi: parsing \"x\": invalid syntax"): people get words instead.
var (
	cronNotNumber   = regexp.MustCompile(`failed to parse int from ([^:]*): strconv\.\w+: .*`)
	cronNotDuration = regexp.MustCompile(`failed to parse duration (.*): time: .*`)
)

// cronProblem is the cron library's complaint in words a person reads.
func cronProblem(err error) string {
	msg := err.Error()
	if m := cronNotNumber.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%q is not a number", m[1])
	}
	if m := cronNotDuration.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%q is not a duration such as 5m or 1h30m", strings.TrimSpace(strings.TrimPrefix(m[1], "@every")))
	}
	return msg
}

// schedule parses a job's cron expression in its time zone.
func schedule(expr, tz string) (cron.Schedule, *time.Location, error) {
	if err := checkText("cron", expr, true, MaxCronLen); err != nil {
		return nil, nil, err
	}
	up := strings.ToUpper(strings.TrimSpace(expr))
	if strings.HasPrefix(up, "TZ=") || strings.HasPrefix(up, "CRON_TZ=") {
		return nil, nil, errs.Invalid("cron %q: give the time zone in timezone, not in the expression", expr)
	}
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return nil, nil, errs.Invalid("cron %q is not a valid cron expression (%s); use five fields, minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1-5\", or @hourly, @daily, @weekly, @monthly", expr, cronProblem(err))
	}
	if every, ok := sched.(cron.ConstantDelaySchedule); ok && every.Delay < time.Minute {
		return nil, nil, errs.Invalid("cron %q runs more often than once a minute; the shortest interval is @every 1m", expr)
	}
	if tz == "" || tz == "Local" || strings.TrimSpace(tz) != tz {
		return nil, nil, errs.Invalid("timezone %q is not an IANA time zone name; use one such as UTC, Europe/Berlin or America/New_York", tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, nil, errs.Invalid("timezone %q is not an IANA time zone name; use one such as UTC, Europe/Berlin or America/New_York", tz)
	}
	return sched, loc, nil
}

// nextRun is the first run of the schedule strictly after t, in UTC; the zero time when
// the schedule has none (cron finds no match within five years, e.g. "0 0 30 2 *"),
// which everywhere means "never".
func nextRun(sched cron.Schedule, loc *time.Location, t time.Time) time.Time {
	return sched.Next(t.In(loc)).UTC().Truncate(time.Microsecond)
}

// JobInput is a new job, or the changes to one (nil fields stay as they are).
type JobInput struct {
	Name     *string
	Cron     *string
	Timezone *string // IANA name; UTC when a new job gives none
	Summary  *string
	Details  *string
	Steps    *[]string
	// AgentID assigns each task to this agent; Skill instead picks, at each run, the
	// agent of the project with that skill that has the fewest open tasks (then the
	// lowest id). Giving one clears the other; Unassign clears both.
	AgentID  *int64
	Skill    *string
	Unassign bool
	CatchUp  *string // skip (default) or run_once
}

// apply validates in and writes it onto j, resolving the agent and the skill.
func (s *Service) applyJobInput(ctx context.Context, r store.Reader, j *model.Job, in JobInput) error {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&j.Name, in.Name)
	set(&j.Cron, in.Cron)
	set(&j.Timezone, in.Timezone)
	set(&j.Summary, in.Summary)
	set(&j.Details, in.Details)
	set(&j.CatchUp, in.CatchUp)
	if in.Steps != nil {
		j.Steps = append([]string{}, (*in.Steps)...)
	}
	if err := checkText("name", j.Name, true, MaxJobNameLen); err != nil {
		return err
	}
	sched, loc, err := schedule(j.Cron, j.Timezone)
	if err != nil {
		return err
	}
	// A schedule with no next time would be stored as "never" and silently do nothing:
	// refuse it so that the caller learns at once.
	if nextRun(sched, loc, s.clock()).IsZero() {
		return errs.Invalid("cron %q never fires (no date matches it in the next five years, e.g. 30 February); give a schedule that has a next run", j.Cron)
	}
	tmpl := CreateTaskInput{Summary: j.Summary, Details: j.Details}
	for _, st := range j.Steps {
		tmpl.Steps = append(tmpl.Steps, StepInput{Title: st})
	}
	if err := tmpl.validate(); err != nil {
		return err
	}
	if j.CatchUp != model.CatchUpSkip && j.CatchUp != model.CatchUpRunOnce {
		return errs.Invalid("catchUp %q is not a catch-up policy; use skip or run_once", j.CatchUp)
	}
	if in.AgentID != nil && in.Skill != nil {
		return errs.Invalid("give agentId or skill, not both: a job's tasks go to one agent, or to an agent picked by skill at each run")
	}
	switch {
	case in.Unassign:
		j.AgentID, j.SkillID, j.SkillName = nil, nil, ""
	case in.AgentID != nil:
		a, err := s.projectAgent(ctx, r, j.ProjectID, *in.AgentID)
		if err != nil {
			return err
		}
		j.AgentID, j.SkillID, j.SkillName = &a.ID, nil, ""
	case in.Skill != nil:
		sk, err := r.SkillByName(ctx, j.ProjectID, *in.Skill)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Invalid("skill %q is not a skill of this project; create it first (createSkill)", *in.Skill)
		}
		if err != nil {
			return internal("load skill", err)
		}
		j.AgentID, j.SkillID, j.SkillName = nil, &sk.ID, sk.Name
	}
	return nil
}

// reschedule sets the job's next run after now (none while paused).
func reschedule(j *model.Job, now time.Time) {
	if j.Paused {
		j.NextRunAt = nil
		return
	}
	sched, loc, err := schedule(j.Cron, j.Timezone)
	if err != nil {
		j.NextRunAt = nil
		return
	}
	next := nextRun(sched, loc, now)
	if next.IsZero() {
		j.NextRunAt = nil // never
		return
	}
	j.NextRunAt = &next
}

// CreateJob adds a job to the project (admin). Its first run is the schedule's first
// time after now.
func (s *Service) CreateJob(ctx context.Context, p *auth.Principal, in JobInput) (*model.Job, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	now := s.clock()
	if in.Name == nil || in.Cron == nil || in.Summary == nil {
		return nil, errs.Invalid("name, cron and summary are required")
	}
	var j *model.Job
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		j = &model.Job{ProjectID: p.ProjectID, Timezone: "UTC", CatchUp: model.CatchUpSkip, Steps: []string{}, CreatedAt: now, UpdatedAt: now}
		if err := s.applyJobInput(ctx, tx.Reader, j, in); err != nil {
			return err
		}
		reschedule(j, now)
		if err := tx.InsertJob(ctx, j); errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("a job named %q already exists in this project", j.Name)
		} else if err != nil {
			return internal("create job", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventJobCreated, j, now)
	})
	if err != nil {
		return nil, err
	}
	s.jobsChanged()
	return j, nil
}

// changeJob is the shape of every job change: load, change, reschedule if asked, save
// with its event.
func (s *Service) changeJob(ctx context.Context, p *auth.Principal, id int64, event string, change func(tx *store.Tx, j *model.Job, now time.Time) error) (*model.Job, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	now := s.clock()
	var j *model.Job
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		var err error
		if j, err = s.loadJob(ctx, tx.Reader, p.ProjectID, id); err != nil {
			return err
		}
		if err := change(tx, j, now); err != nil {
			return err
		}
		j.UpdatedAt = now
		if err := tx.UpdateJob(ctx, j); errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("a job named %q already exists in this project", j.Name)
		} else if err != nil {
			return internal("update job", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, event, j, now)
	})
	if err != nil {
		return nil, err
	}
	s.jobsChanged()
	return j, nil
}

// UpdateJob changes a job (admin). A new cron expression or time zone reschedules it.
func (s *Service) UpdateJob(ctx context.Context, p *auth.Principal, id int64, in JobInput) (*model.Job, error) {
	return s.changeJob(ctx, p, id, EventJobUpdated, func(tx *store.Tx, j *model.Job, now time.Time) error {
		cronBefore, tzBefore := j.Cron, j.Timezone
		if err := s.applyJobInput(ctx, tx.Reader, j, in); err != nil {
			return err
		}
		if j.Cron != cronBefore || j.Timezone != tzBefore {
			reschedule(j, now)
		}
		return nil
	})
}

// SetJobPaused pauses a job (no runs, none caught up later) or resumes it from its
// next scheduled time after now (admin).
func (s *Service) SetJobPaused(ctx context.Context, p *auth.Principal, id int64, paused bool) (*model.Job, error) {
	return s.changeJob(ctx, p, id, EventJobUpdated, func(_ *store.Tx, j *model.Job, now time.Time) error {
		if j.Paused == paused {
			return nil
		}
		j.Paused = paused
		reschedule(j, now)
		return nil
	})
}

// DeleteJob removes a job and its runs (admin); the tasks it made stay.
func (s *Service) DeleteJob(ctx context.Context, p *auth.Principal, id int64) error {
	if err := require(p, auth.Admin); err != nil {
		return err
	}
	now := s.clock()
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		j, err := s.loadJob(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteJob(ctx, p.ProjectID, id); err != nil {
			return internal("delete job", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventJobDeleted, map[string]any{"id": id, "name": j.Name}, now)
	})
	if err == nil {
		s.jobsChanged()
	}
	return err
}

func (s *Service) loadJob(ctx context.Context, r store.Reader, projectID string, id int64) (*model.Job, error) {
	j, err := r.Job(ctx, projectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("job %d not found", id)
	}
	if err != nil {
		return nil, internal("load job", err)
	}
	return j, nil
}

// Jobs lists the project's jobs (task:read).
func (s *Service) Jobs(ctx context.Context, p *auth.Principal) ([]model.Job, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	out, err := s.store.Read().Jobs(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list jobs", err)
	}
	return out, nil
}

// Job loads one job (task:read).
func (s *Service) Job(ctx context.Context, p *auth.Principal, id int64) (*model.Job, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	return s.loadJob(ctx, s.store.Read(), p.ProjectID, id)
}

// JobRuns lists a job's runs, newest first; before pages (task:read).
func (s *Service) JobRuns(ctx context.Context, p *auth.Principal, id, before int64, limit int) ([]model.JobRun, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, errs.Invalid("first must be between 1 and %d", MaxListLimit)
	}
	r := s.store.Read()
	if _, err := s.loadJob(ctx, r, p.ProjectID, id); err != nil {
		return nil, err
	}
	out, err := r.JobRuns(ctx, id, before, limit)
	if err != nil {
		return nil, internal("list job runs", err)
	}
	return out, nil
}

// jobPrincipal is the job acting in its project: the actor of what its runs create.
func jobPrincipal(j *model.Job) *auth.Principal {
	return &auth.Principal{Kind: auth.Kind(audit.KindJob), ProjectID: j.ProjectID, Name: j.Name,
		Scopes: []string{auth.TaskRead, auth.TaskWrite}, Via: audit.ViaJob}
}

// runJob creates the job's task for one run, in tx, and records the run. A run that
// cannot make its task (no agent has the skill) is recorded as failed with the reason.
func (s *Service) runJob(ctx context.Context, tx *store.Tx, j *model.Job, scheduledFor, now time.Time, trigger, note string) (*model.JobRun, error) {
	run := &model.JobRun{JobID: j.ID, ScheduledFor: scheduledFor, RanAt: now, Trigger: trigger, Outcome: model.RunCreated}
	in := CreateTaskInput{Summary: j.Summary, Details: j.Details, AgentID: j.AgentID, source: model.SourceJob}
	for _, st := range j.Steps {
		in.Steps = append(in.Steps, StepInput{Title: st})
	}
	var err error
	if j.SkillID != nil {
		var ids []int64
		if ids, err = tx.AgentsWithSkill(ctx, j.ProjectID, *j.SkillID); err != nil {
			return nil, internal("pick an agent", err)
		}
		if len(ids) == 0 {
			err = errs.Invalid("no agent of the project has the skill %q: attach it to an agent (attachSkill)", j.SkillName)
		} else {
			in.AgentID, in.RequiredSkills = &ids[0], []string{j.SkillName}
		}
	}
	var task *model.Task
	if err == nil {
		task, err = s.insertTask(ctx, tx, jobPrincipal(j), in, now)
	}
	var reasons []string
	if note != "" {
		reasons = append(reasons, note)
	}
	var e *errs.Error
	switch {
	case errors.As(err, &e):
		run.Outcome = model.RunFailed
		reasons = append(reasons, e.Message)
	case err != nil:
		return nil, err
	default:
		run.TaskID = &task.ID
		if task.BlockedReason != "" {
			reasons = append(reasons, task.BlockedReason)
		}
	}
	run.Reason = strings.Join(reasons, "; ")
	if err := tx.InsertJobRun(ctx, run); err != nil {
		return nil, internal("record job run", err)
	}
	return run, nil
}

// RunJobNow runs a job at once, paused or not, without changing its schedule (admin).
func (s *Service) RunJobNow(ctx context.Context, p *auth.Principal, id int64) (*model.JobRun, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	now := s.clock()
	var run *model.JobRun
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		j, err := s.loadJob(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return err
		}
		if run, err = s.runJob(ctx, tx, j, now, now, model.TriggerManual, ""); err != nil {
			return err
		}
		if run.Outcome != model.RunSkipped {
			j.LastRunAt = &now
			if err := tx.UpdateJob(ctx, j); err != nil {
				return internal("update job", err)
			}
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventJobRan, jobRanEvent(j, []*model.JobRun{run}, 0), now)
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

func jobRanEvent(j *model.Job, runs []*model.JobRun, skippedUnrecorded int) map[string]any {
	counts := map[string]int{model.RunCreated: 0, model.RunFailed: 0, model.RunSkipped: skippedUnrecorded}
	var tasks []int64
	for _, r := range runs {
		counts[r.Outcome]++
		if r.TaskID != nil {
			tasks = append(tasks, *r.TaskID)
		}
	}
	return map[string]any{"id": j.ID, "name": j.Name, "created": counts[model.RunCreated], "failed": counts[model.RunFailed],
		"skipped": counts[model.RunSkipped], "taskIds": tasks, "nextRunAt": j.NextRunAt}
}

// NextJobRun is when the earliest scheduled run of any job is due; ok is false when no
// job is scheduled. The scheduler sleeps until then (or until JobsChanged).
func (s *Service) NextJobRun(ctx context.Context) (time.Time, bool, error) {
	return s.store.Read().NextJobRun(ctx)
}

// RunDueJobs runs every job whose time has come, as of now. startedAt is when the
// scheduler started (or the earliest wall time it has seen since, if the clock was set
// back): runs due before it were missed while agentdesk was not running;
// so are runs more than MissedAfter late. Missed runs follow the job's catch-up
// policy: skip records each as skipped; run_once makes one task for the latest and
// records the others as skipped. Each job is one transaction: its tasks, its runs, its
// next run time and the events.
func (s *Service) RunDueJobs(ctx context.Context, now, startedAt time.Time) error {
	_, err := s.RunDueJobsHeld(ctx, now, startedAt)
	return err
}

// RunDueJobsHeld is RunDueJobs, and says how many due jobs it left to another server
// sharing the PostgreSQL database, which was running them (or whose write a deadlock
// with another server's cancelled): they stay due until that server commits, so the
// scheduler waits for that, not longer, before it looks again.
func (s *Service) RunDueJobsHeld(ctx context.Context, now, startedAt time.Time) (held int, err error) {
	now = now.UTC().Truncate(time.Microsecond)
	due, err := s.store.Read().DueJobs(ctx, now)
	if err != nil {
		return 0, internal("list due jobs", err)
	}
	var errsOut []error
	for i := range due {
		j := &due[i]
		err := s.store.Write(ctx, s.author(jobPrincipal(j)), func(tx *store.Tx) error {
			// Still due, and (PostgreSQL) claimed for this write: another server's
			// scheduler cannot run it too.
			cur, err := tx.ClaimDueJob(ctx, j.ProjectID, j.ID, now)
			if errors.Is(err, store.ErrNotFound) {
				return nil // deleted, paused or rescheduled meanwhile
			}
			if err != nil {
				return err
			}
			return s.catchUp(ctx, tx, cur, now, startedAt)
		})
		// Held by another server, or cancelled by PostgreSQL to break a deadlock with
		// another server's batch (nothing saved): look again in a second, not after the
		// minute a failed pass waits.
		if errors.Is(err, store.ErrJobHeld) || store.IsDeadlock(err) {
			held++
			continue
		}
		if err != nil {
			errsOut = append(errsOut, err)
		}
	}
	return held, errors.Join(errsOut...)
}

func (s *Service) catchUp(ctx context.Context, tx *store.Tx, j *model.Job, now, startedAt time.Time) error {
	sched, loc, err := schedule(j.Cron, j.Timezone)
	if err != nil {
		return err
	}
	var onTime, missed []time.Time
	missedCount := 0
	at := *j.NextRunAt
	// A zero time is "never" (no further run): it ends the loop rather than count
	// every run since year 1.
	for !at.IsZero() && !at.After(now) {
		if at.Before(startedAt) || now.Sub(at) > MissedAfter {
			missedCount++
			if len(missed) < maxMissedRecorded {
				missed = append(missed, at)
			} else {
				missed[len(missed)-1] = at // keep the latest last
			}
		} else {
			onTime = append(onTime, at)
		}
		if missedCount >= maxMissedCounted {
			at = nextRun(sched, loc, now)
			break
		}
		at = nextRun(sched, loc, at)
	}
	var runs []*model.JobRun
	skip := func(t time.Time, reason string) error {
		run := &model.JobRun{JobID: j.ID, ScheduledFor: t, RanAt: now, Outcome: model.RunSkipped, Trigger: model.TriggerCatchUp, Reason: reason}
		runs = append(runs, run)
		return tx.InsertJobRun(ctx, run)
	}
	unrecorded := missedCount - len(missed)
	for i, t := range missed {
		last := i == len(missed)-1
		if last && j.CatchUp == model.CatchUpRunOnce {
			note := "catch-up run for the missed run"
			if missedCount > 1 {
				note = "catch-up run for " + itoa(missedCount) + " missed runs"
			}
			run, err := s.runJob(ctx, tx, j, t, now, model.TriggerCatchUp, note)
			if err != nil {
				return err
			}
			runs = append(runs, run)
			continue
		}
		reason := "missed while agentdesk was not running (or the machine slept); catch-up policy " + j.CatchUp
		if j.CatchUp == model.CatchUpRunOnce {
			reason = "missed; covered by one catch-up run (catch-up policy run_once)"
		}
		if last && unrecorded > 0 {
			reason += "; " + itoa(unrecorded) + " earlier missed runs were skipped too"
		}
		if err := skip(t, reason); err != nil {
			return internal("record job run", err)
		}
	}
	for _, t := range onTime {
		run, err := s.runJob(ctx, tx, j, t, now, model.TriggerSchedule, "")
		if err != nil {
			return err
		}
		runs = append(runs, run)
	}
	for _, r := range runs {
		if r.Outcome != model.RunSkipped {
			j.LastRunAt = &now
		}
	}
	j.NextRunAt, j.UpdatedAt = nil, now
	if !at.IsZero() {
		next := at
		j.NextRunAt = &next
	}
	if err := tx.UpdateJob(ctx, j); err != nil {
		return internal("update job", err)
	}
	return tx.AppendEvent(ctx, j.ProjectID, EventJobRan, jobRanEvent(j, runs, unrecorded), now)
}
