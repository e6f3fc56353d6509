package graphql

import (
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Jobs: scheduled task templates, their runs, pause, resume and run now.

var catchUpEnum = gql.NewEnum(gql.EnumConfig{Name: "CatchUpPolicy", Description: "What a job does with the runs it missed while agentdesk was not running (or the machine slept).", Values: gql.EnumValueConfigMap{
	model.CatchUpSkip:    &gql.EnumValueConfig{Value: model.CatchUpSkip, Description: "Make no task for missed runs; each is recorded as skipped."},
	model.CatchUpRunOnce: &gql.EnumValueConfig{Value: model.CatchUpRunOnce, Description: "Make one task for all the missed runs (the latest); the others are recorded as skipped."},
}})

var jobRunOutcomeEnum = gql.NewEnum(gql.EnumConfig{Name: "JobRunOutcome", Description: "What came of a job run.", Values: gql.EnumValueConfigMap{
	model.RunCreated: &gql.EnumValueConfig{Value: model.RunCreated, Description: "The task was created (taskId)."},
	model.RunFailed:  &gql.EnumValueConfig{Value: model.RunFailed, Description: "No task could be made; reason says why."},
	model.RunSkipped: &gql.EnumValueConfig{Value: model.RunSkipped, Description: "A missed run the catch-up policy skipped."},
}})

var jobRunTriggerEnum = gql.NewEnum(gql.EnumConfig{Name: "JobRunTrigger", Description: "Why a job ran.", Values: gql.EnumValueConfigMap{
	model.TriggerSchedule: &gql.EnumValueConfig{Value: model.TriggerSchedule, Description: "Its scheduled time came."},
	model.TriggerCatchUp:  &gql.EnumValueConfig{Value: model.TriggerCatchUp, Description: "A run missed while agentdesk was not running."},
	model.TriggerManual:   &gql.EnumValueConfig{Value: model.TriggerManual, Description: "runJobNow."},
}})

var jobType = gql.NewObject(gql.ObjectConfig{Name: "Job", Description: "A scheduled task template: on each time of its cron schedule (in its time zone) the server creates a task with source job.", Fields: gql.Fields{
	"id":       &gql.Field{Type: nnInt, Resolve: field(func(j model.Job) any { return j.ID })},
	"name":     &gql.Field{Type: nnString, Resolve: field(func(j model.Job) any { return j.Name })},
	"cron":     &gql.Field{Type: nnString, Description: "Five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @every 1h.", Resolve: field(func(j model.Job) any { return j.Cron })},
	"timezone": &gql.Field{Type: nnString, Description: "IANA time zone the schedule is read in.", Resolve: field(func(j model.Job) any { return j.Timezone })},
	"summary":  &gql.Field{Type: nnString, Description: "The summary of each task.", Resolve: field(func(j model.Job) any { return j.Summary })},
	"details":  &gql.Field{Type: nnString, Resolve: field(func(j model.Job) any { return j.Details })},
	"steps":    &gql.Field{Type: listOf(gql.String), Description: "Step titles of each task.", Resolve: field(func(j model.Job) any { return j.Steps })},
	"agentId":  &gql.Field{Type: gql.Int, Description: "Each task goes to this agent (null when the job picks by skill, or leaves tasks unassigned).", Resolve: field(func(j model.Job) any { return int64Ptr(j.AgentID) })},
	"skill": &gql.Field{Type: gql.String, Description: "At each run the task goes to the agent with this skill that has the fewest open tasks (then the lowest id); none: the run fails.", Resolve: field(func(j model.Job) any {
		if j.SkillID == nil {
			return nil
		}
		return j.SkillName
	})},
	"catchUp":   &gql.Field{Type: gql.NewNonNull(catchUpEnum), Resolve: field(func(j model.Job) any { return j.CatchUp })},
	"paused":    &gql.Field{Type: nnBool, Resolve: field(func(j model.Job) any { return j.Paused })},
	"nextRunAt": &gql.Field{Type: gql.String, Description: "The next scheduled run (RFC 3339, UTC); null while paused.", Resolve: field(func(j model.Job) any { return timePtrString(j.NextRunAt) })},
	"lastRunAt": &gql.Field{Type: gql.String, Description: "When the job last ran (RFC 3339, UTC), scheduled or by hand; null before its first run.", Resolve: field(func(j model.Job) any { return timePtrString(j.LastRunAt) })},
	"createdAt": timeField("When the job was created", func(j model.Job) time.Time { return j.CreatedAt }, false),
	"updatedAt": timeField("When the job last changed", func(j model.Job) time.Time { return j.UpdatedAt }, false),
}})

var jobRunType = gql.NewObject(gql.ObjectConfig{Name: "JobRun", Description: "One run of a job and what came of it.", Fields: gql.Fields{
	"id":           &gql.Field{Type: nnInt, Resolve: field(func(r model.JobRun) any { return r.ID })},
	"jobId":        &gql.Field{Type: nnInt, Resolve: field(func(r model.JobRun) any { return r.JobID })},
	"scheduledFor": timeField("The scheduled time (for a manual run, when it was asked for)", func(r model.JobRun) time.Time { return r.ScheduledFor }, false),
	"ranAt":        timeField("When the run was handled", func(r model.JobRun) time.Time { return r.RanAt }, false),
	"outcome":      &gql.Field{Type: gql.NewNonNull(jobRunOutcomeEnum), Resolve: field(func(r model.JobRun) any { return r.Outcome })},
	"trigger":      &gql.Field{Type: gql.NewNonNull(jobRunTriggerEnum), Resolve: field(func(r model.JobRun) any { return r.Trigger })},
	"taskId":       &gql.Field{Type: gql.Int, Description: "The task made (it may have been deleted since).", Resolve: field(func(r model.JobRun) any { return int64Ptr(r.TaskID) })},
	"reason":       &gql.Field{Type: nnString, Description: "Why the run failed or was skipped, or a note (a catch-up run, a task held by the budget); empty otherwise.", Resolve: field(func(r model.JobRun) any { return r.Reason })},
}})

func jobArgs(create bool) gql.FieldConfigArgument {
	req := func(t gql.Input) gql.Input {
		if create {
			return gql.NewNonNull(t)
		}
		return t
	}
	args := gql.FieldConfigArgument{
		"name":     {Type: req(gql.String), Description: "Unique in the project, at most 200 characters."},
		"cron":     {Type: req(gql.String), Description: "Five fields (minute hour day-of-month month day-of-week), e.g. \"0 9 * * 1-5\", or @hourly, @daily, @weekly, @monthly, @every 1h (at least 1m)."},
		"timezone": {Type: gql.String, Description: "IANA time zone the schedule is read in, e.g. Europe/Berlin (default UTC)."},
		"summary":  {Type: req(gql.String), Description: "Summary of each task."},
		"details":  {Type: gql.String},
		"steps":    {Type: gql.NewList(nnString), Description: "Step titles of each task."},
		"agentId":  {Type: gql.Int, Description: "Give each task to this agent."},
		"skill":    {Type: gql.String, Description: "Instead of agentId: at each run, give the task to the agent with this skill that has the fewest open tasks (then the lowest id)."},
		"catchUp":  {Type: catchUpEnum, Description: "What to do with runs missed while agentdesk was not running (default skip)."},
	}
	if !create {
		args["id"] = &gql.ArgumentConfig{Type: nnInt}
		args["unassign"] = &gql.ArgumentConfig{Type: gql.Boolean, Description: "Leave the tasks unassigned (clears agentId and skill)."}
	}
	return args
}

func jobInput(args map[string]any) service.JobInput {
	in := service.JobInput{Name: optString(args, "name"), Cron: optString(args, "cron"), Timezone: optString(args, "timezone"),
		Summary: optString(args, "summary"), Details: optString(args, "details"), AgentID: optInt64(args, "agentId"),
		Skill: optString(args, "skill"), CatchUp: optString(args, "catchUp")}
	if _, ok := args["steps"]; ok {
		steps := stringList(args, "steps")
		in.Steps = &steps
	}
	in.Unassign, _ = args["unassign"].(bool)
	return in
}

func (b builder) jobQueries(f gql.Fields) {
	svc := b.svc
	f["jobs"] = &gql.Field{Type: listOf(jobType), Description: "The project's jobs (task:read).",
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Jobs(p.Context, pr)
		})}
	f["job"] = &gql.Field{Type: gql.NewNonNull(jobType), Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Job(p.Context, pr, argInt64(p.Args, "id"))
		})}
	f["jobRuns"] = &gql.Field{Type: listOf(jobRunType), Description: "A job's runs, newest first (task:read); page with first and before.",
		Args: gql.FieldConfigArgument{
			"jobId":  {Type: nnInt},
			"first":  {Type: gql.Int, Description: "At most this many runs, 1 to 1000 (default 100)."},
			"before": {Type: gql.Int, Description: "Only runs older than this run id (the last id of the previous page)."},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			first, before := firstBefore(p.Args)
			return svc.JobRuns(p.Context, pr, argInt64(p.Args, "jobId"), before, first)
		})}
}

// firstBefore reads the paging arguments of the newest-first lists.
func firstBefore(args map[string]any) (int, int64) {
	first := DefaultPageSize
	if v, ok := args["first"].(int); ok {
		first = v
	}
	return first, argInt64(args, "before")
}

func (b builder) jobMutations(f gql.Fields) {
	svc := b.svc
	f["createJob"] = &gql.Field{Type: gql.NewNonNull(jobType), Description: "Schedules a task template (admin). A bad cron expression or time zone is an invalid_argument error.",
		Args: jobArgs(true),
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.CreateJob(p.Context, pr, jobInput(p.Args))
		})}
	f["updateJob"] = &gql.Field{Type: gql.NewNonNull(jobType), Description: "Changes a job (admin); arguments left out stay as they are. A new cron or timezone reschedules it.",
		Args: jobArgs(false),
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.UpdateJob(p.Context, pr, argInt64(p.Args, "id"), jobInput(p.Args))
		})}
	f["deleteJob"] = &gql.Field{Type: nnBool, Description: "Deletes a job and its runs (admin); the tasks it made stay. True when done.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			if err := svc.DeleteJob(p.Context, pr, argInt64(p.Args, "id")); err != nil {
				return nil, err
			}
			return true, nil
		})}
	pause := func(paused bool) gql.FieldResolveFn {
		return resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.SetJobPaused(p.Context, pr, argInt64(p.Args, "id"), paused)
		})
	}
	f["pauseJob"] = &gql.Field{Type: gql.NewNonNull(jobType), Description: "Pauses a job (admin): no runs until resumed, and none caught up then.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}}, Resolve: pause(true)}
	f["resumeJob"] = &gql.Field{Type: gql.NewNonNull(jobType), Description: "Resumes a paused job (admin) from its next scheduled time.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}}, Resolve: pause(false)}
	f["runJobNow"] = &gql.Field{Type: gql.NewNonNull(jobRunType), Description: "Runs a job at once (admin), paused or not; its schedule does not change.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.RunJobNow(p.Context, pr, argInt64(p.Args, "id"))
		})}
}
