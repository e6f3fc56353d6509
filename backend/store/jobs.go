package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

const jobColumns = `j.id, j.project_id, j.name, j.cron, j.timezone, j.summary, j.details, j.steps, j.agent_id, j.skill_id,
	COALESCE(s.name, ''), j.catch_up, j.paused, j.next_run_at, j.last_run_at, j.created_at, j.updated_at`

const jobFrom = ` FROM jobs j LEFT JOIN skills s ON s.id = j.skill_id`

func scanJob(row interface{ Scan(...any) error }) (*model.Job, error) {
	var j model.Job
	var steps, created, updated string
	var agentID, skillID sql.NullInt64
	var next, last sql.NullString
	err := row.Scan(&j.ID, &j.ProjectID, &j.Name, &j.Cron, &j.Timezone, &j.Summary, &j.Details, &steps, &agentID, &skillID,
		&j.SkillName, &j.CatchUp, &j.Paused, &next, &last, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(steps), &j.Steps); err != nil {
		return nil, err
	}
	if j.Steps == nil {
		j.Steps = []string{}
	}
	if agentID.Valid {
		j.AgentID = &agentID.Int64
	}
	if skillID.Valid {
		j.SkillID = &skillID.Int64
	}
	j.NextRunAt, j.LastRunAt = parseTimePtr(next), parseTimePtr(last)
	if j.NextRunAt != nil && j.NextRunAt.IsZero() {
		j.NextRunAt = nil // stored by older versions for a schedule that never fires
	}
	j.CreatedAt, j.UpdatedAt = parseTime(created), parseTime(updated)
	return &j, nil
}

// neverRun is the zero time as older versions stored it for a schedule with no next
// run (e.g. 30 February). It means "never": the queries below skip it, so that the
// scheduler neither catches up from year 1 nor wakes at once forever.
var neverRun = fmtTime(time.Time{})

// nextRunAt stores a job's next run, NULL for never.
func nextRunAt(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return fmtTime(*t)
}

// InsertJob stores a new job and sets its id; a name taken in the project is ErrDuplicate.
func (t *Tx) InsertJob(ctx context.Context, j *model.Job) error {
	var one int
	err := t.queryRow(ctx, `SELECT 1 FROM jobs WHERE project_id = $1 AND name = $2`, j.ProjectID, j.Name).Scan(&one)
	if err == nil {
		return ErrDuplicate
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	steps, err := json.Marshal(j.Steps)
	if err != nil {
		return err
	}
	res, err := t.insert(ctx,
		`INSERT INTO jobs (project_id, name, cron, timezone, summary, details, steps, agent_id, skill_id, catch_up, paused, next_run_at, last_run_at, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		j.ProjectID, j.Name, j.Cron, j.Timezone, j.Summary, j.Details, string(steps), j.AgentID, j.SkillID, j.CatchUp, j.Paused,
		nextRunAt(j.NextRunAt), fmtTimePtr(j.LastRunAt), fmtTime(j.CreatedAt), fmtTime(j.UpdatedAt))
	if err != nil {
		return err
	}
	j.ID, err = res.LastInsertId()
	return err
}

// UpdateJob writes every field of a job; a name taken by another job is ErrDuplicate.
func (t *Tx) UpdateJob(ctx context.Context, j *model.Job) error {
	var other int64
	err := t.queryRow(ctx, `SELECT id FROM jobs WHERE project_id = $1 AND name = $2`, j.ProjectID, j.Name).Scan(&other)
	if err == nil && other != j.ID {
		return ErrDuplicate
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	steps, err := json.Marshal(j.Steps)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx,
		`UPDATE jobs SET name = $1, cron = $2, timezone = $3, summary = $4, details = $5, steps = $6, agent_id = $7, skill_id = $8, catch_up = $9,
		 paused = $10, next_run_at = $11, last_run_at = $12, updated_at = $13 WHERE id = $14 AND project_id = $15`,
		j.Name, j.Cron, j.Timezone, j.Summary, j.Details, string(steps), j.AgentID, j.SkillID, j.CatchUp, j.Paused,
		nextRunAt(j.NextRunAt), fmtTimePtr(j.LastRunAt), fmtTime(j.UpdatedAt), j.ID, j.ProjectID)
	return err
}

// DeleteJob removes a job of the project with its runs.
func (t *Tx) DeleteJob(ctx context.Context, projectID string, id int64) error {
	return t.execOne(ctx, `DELETE FROM jobs WHERE id = $1 AND project_id = $2`, id, projectID)
}

// Job loads a job of the project.
func (r Reader) Job(ctx context.Context, projectID string, id int64) (*model.Job, error) {
	return scanJob(r.queryRow(ctx, `SELECT `+jobColumns+jobFrom+` WHERE j.project_id = $1 AND j.id = $2`, projectID, id))
}

func (r Reader) jobs(ctx context.Context, where string, args ...any) ([]model.Job, error) {
	return queryList(ctx, r, scanJob, `SELECT `+jobColumns+jobFrom+` WHERE `+where, args...)
}

// Jobs lists the project's jobs by id.
func (r Reader) Jobs(ctx context.Context, projectID string) ([]model.Job, error) {
	return r.jobs(ctx, `j.project_id = $1 ORDER BY j.id`, projectID)
}

// DueJobs lists the jobs of every project whose next run is at or before now.
func (r Reader) DueJobs(ctx context.Context, now time.Time) ([]model.Job, error) {
	return r.jobs(ctx, `j.next_run_at IS NOT NULL AND j.next_run_at > $1 AND j.next_run_at <= $2 ORDER BY j.next_run_at, j.id`, neverRun, fmtTime(now))
}

// NextJobRun is the earliest next run of any job; ok is false when no job is scheduled.
func (r Reader) NextJobRun(ctx context.Context) (at time.Time, ok bool, err error) {
	var s sql.NullString
	if err := r.queryRow(ctx, `SELECT MIN(next_run_at) FROM jobs WHERE next_run_at IS NOT NULL AND next_run_at > $1`, neverRun).Scan(&s); err != nil {
		return time.Time{}, false, err
	}
	if !s.Valid {
		return time.Time{}, false, nil
	}
	return parseTime(s.String), true, nil
}

// InsertJobRun records a run of a job and sets its id.
func (t *Tx) InsertJobRun(ctx context.Context, run *model.JobRun) error {
	res, err := t.insert(ctx,
		`INSERT INTO job_runs (job_id, scheduled_for, ran_at, outcome, task_id, reason, trigger) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		run.JobID, fmtTime(run.ScheduledFor), fmtTime(run.RanAt), run.Outcome, run.TaskID, run.Reason, run.Trigger)
	if err != nil {
		return err
	}
	run.ID, err = res.LastInsertId()
	return err
}

// JobRuns lists a job's runs, newest first, before the run id before (0: from the newest).
func (r Reader) JobRuns(ctx context.Context, jobID, before int64, limit int) ([]model.JobRun, error) {
	q := `SELECT id, job_id, scheduled_for, ran_at, outcome, task_id, reason, trigger FROM job_runs WHERE job_id = $1`
	args := []any{jobID}
	if before > 0 {
		q += ` AND id < $2`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC`
	if limit > 0 {
		q += limitClause(limit)
	}
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []model.JobRun{}
	for rows.Next() {
		var run model.JobRun
		var sched, ran string
		var task sql.NullInt64
		if err := rows.Scan(&run.ID, &run.JobID, &sched, &ran, &run.Outcome, &task, &run.Reason, &run.Trigger); err != nil {
			return nil, err
		}
		run.ScheduledFor, run.RanAt = parseTime(sched), parseTime(ran)
		if task.Valid {
			run.TaskID = &task.Int64
		}
		out = append(out, run)
	}
	return out, rows.Err()
}
