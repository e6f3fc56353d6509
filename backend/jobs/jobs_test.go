package jobs_test

import (
	"context"
	"database/sql"
	"errors"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/jobs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// site is where a server's data lives: its data directory and, on PostgreSQL, the
// database; a server started again on the same site finds its data.
type site struct {
	dir string
	db  store.Location
}

// newSite is a new site of the engine (pgtest.Engines).
func newSite(t *testing.T, engine string) site {
	t.Helper()
	return site{dir: t.TempDir(), db: testenv.ParseDB(t, pgtest.DBFor(t, engine, testenv.MigratePostgres))}
}

// start runs a real server (real SQLite file in the site's directory, or its
// PostgreSQL database; listening on 127.0.0.1) on the manual clock. Its webhooks may
// reach private addresses: the webhook tests' receivers are on loopback.
func start(t *testing.T, s site, clock *jobstest.ManualClock) *server.Server {
	t.Helper()
	return startServer(t, server.Config{DataDir: s.dir, DB: s.db, Clock: clock, WebhooksAllowPrivate: true})
}

// startPublicOnly is start with webhooks that reach the public internet only, as
// agentdesk --serve runs by default.
func startPublicOnly(t *testing.T, s site, clock *jobstest.ManualClock) *server.Server {
	t.Helper()
	return startServer(t, server.Config{DataDir: s.dir, DB: s.db, Clock: clock})
}

func startServer(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	return srv
}

func stop(t *testing.T, srv *server.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func project(t *testing.T, svc *service.Service) string {
	t.Helper()
	ps, err := svc.Projects(context.Background(), auth.Owner(""))
	if err != nil || len(ps) != 1 {
		t.Fatalf("projects: %v %v", ps, err)
	}
	return ps[0].ID
}

// tick moves the clock to each next minute in turn, each time once the scheduler is
// waiting for exactly that minute, and finally waits until it waits for the minute
// after: so every run of those minutes has been handled, on time.
func tick(t *testing.T, clock *jobstest.ManualClock, minutes int) {
	t.Helper()
	for range minutes {
		next := clock.Now().Truncate(time.Minute).Add(time.Minute)
		if !clock.WaitForTimer(next, 10*time.Second) {
			t.Fatalf("the scheduler is not waiting for %s", next.Format(time.RFC3339))
		}
		clock.Set(next)
	}
	after := clock.Now().Truncate(time.Minute).Add(time.Minute)
	if !clock.WaitForTimer(after, 10*time.Second) {
		t.Fatalf("the scheduler is not waiting for %s after the last tick", after.Format(time.RFC3339))
	}
}

func jobTasks(t *testing.T, svc *service.Service, pid string) []model.Task {
	t.Helper()
	tasks, _, err := svc.ListTasks(context.Background(), auth.Owner(pid), service.ListTasksInput{})
	if err != nil {
		t.Fatal(err)
	}
	var out []model.Task
	for _, task := range tasks {
		if task.Source == model.SourceJob {
			out = append(out, task)
		}
	}
	return out
}

func runs(t *testing.T, svc *service.Service, pid string, jobID int64) []model.JobRun {
	t.Helper()
	rs, err := svc.JobRuns(context.Background(), auth.Owner(pid), jobID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func ptr[T any](v T) *T { return &v }

// editDB changes the stopped server's database behind the service's back, as an older
// version or a hand edit would.
func editDB(t *testing.T, s site, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", server.DBPath(s.dir))
	if s.db.Engine == store.Postgres {
		db, err = sql.Open("pgx", s.db.URL)
		query = strings.Replace(query, "?", "$1", 1) // the edits take one parameter
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

// TestEveryMinuteForAnHour: a job due every minute makes exactly 60 tasks across a
// simulated hour, each with source job, the job's agent and its activity as the job's.
func TestEveryMinuteForAnHour(t *testing.T) { pgtest.Engines(t, testEveryMinuteForAnHour) }

func testEveryMinuteForAnHour(t *testing.T, engine string) {
	clock := jobstest.NewManualClock(time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC))
	srv := start(t, newSite(t, engine), clock)
	defer stop(t, srv)
	svc := srv.Service
	pid := project(t, svc)
	owner := auth.Owner(pid)
	agent, err := svc.CreateAgent(context.Background(), owner, "reporter")
	if err != nil {
		t.Fatal(err)
	}
	job, err := svc.CreateJob(context.Background(), owner, service.JobInput{Name: ptr("heartbeat"), Cron: ptr("* * * * *"),
		Timezone: ptr("Europe/Berlin"), Summary: ptr("Check the queue"), Steps: &[]string{"look", "report"}, AgentID: &agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 3, 2, 9, 1, 0, 0, time.UTC); job.NextRunAt == nil || !job.NextRunAt.Equal(want) {
		t.Fatalf("next run %v, want %v", job.NextRunAt, want)
	}

	tick(t, clock, 60)

	// The scheduler's timer for 10:01 can be seen a moment before the 10:00 pass's task
	// is readable (a failing run once had 60 runs recorded and 59 tasks listed, then 60
	// on a second read): wait for the pass, then count. The clock stands still, so no
	// 61st can come.
	tasks := jobTasks(t, svc, pid)
	for deadline := time.Now().Add(5 * time.Second); len(tasks) < 60 && time.Now().Before(deadline); tasks = jobTasks(t, svc, pid) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(tasks) != 60 {
		t.Fatalf("%d tasks after a simulated hour, want 60", len(tasks))
	}
	for _, task := range tasks {
		if task.Summary != "Check the queue" || task.AgentID == nil || *task.AgentID != agent.ID || task.Status != model.StatusTodo || len(task.Steps) != 2 {
			t.Fatalf("task %+v", task)
		}
	}
	rs := runs(t, svc, pid, job.ID)
	if len(rs) != 60 {
		t.Fatalf("%d runs, want 60", len(rs))
	}
	for i, r := range rs { // newest first
		want := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC).Add(-time.Duration(i) * time.Minute)
		if r.Outcome != model.RunCreated || r.Trigger != model.TriggerSchedule || r.TaskID == nil || !r.ScheduledFor.Equal(want) {
			t.Fatalf("run %d: %+v, want created for %s", i, r, want)
		}
	}
	j, err := svc.Job(context.Background(), owner, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !j.LastRunAt.Equal(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) || !j.NextRunAt.Equal(time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC)) {
		t.Fatalf("last %v next %v", j.LastRunAt, j.NextRunAt)
	}
	acts, err := svc.Activity(context.Background(), owner, service.ActivityInput{ObjectType: "task", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 60 || acts[0].Actor != "heartbeat" || acts[0].ActorKind != "job" || acts[0].Via != "job" || acts[0].Action != "task.created" {
		t.Fatalf("activity: %d entries, first %+v", len(acts), acts[0])
	}

	// Paused: the next hour makes nothing; resumed: it carries on from the next minute,
	// without catching up on the paused hour.
	if _, err := svc.SetJobPaused(context.Background(), owner, job.ID, true); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if _, err := svc.SetJobPaused(context.Background(), owner, job.ID, false); err != nil {
		t.Fatal(err)
	}
	tick(t, clock, 3)
	if n := len(jobTasks(t, svc, pid)); n != 63 {
		t.Fatalf("%d tasks after pause, resume and 3 minutes, want 63", n)
	}
}

// TestDowntimeCatchUp: the server stops for 30 minutes. With skip, starting again makes
// no catch-up task and records the 30 missed runs as skipped; with run_once it makes
// exactly one task. Then both carry on every minute.
func TestDowntimeCatchUp(t *testing.T) { pgtest.Engines(t, testDowntimeCatchUp) }

func testDowntimeCatchUp(t *testing.T, engine string) {
	for _, policy := range []string{model.CatchUpSkip, model.CatchUpRunOnce} {
		t.Run(policy, func(t *testing.T) {
			dir := newSite(t, engine)
			clock := jobstest.NewManualClock(time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC))
			srv := start(t, dir, clock)
			svc := srv.Service
			pid := project(t, svc)
			owner := auth.Owner(pid)
			job, err := svc.CreateJob(context.Background(), owner, service.JobInput{Name: ptr("sync"), Cron: ptr("* * * * *"),
				Summary: ptr("Sync"), CatchUp: ptr(policy)})
			if err != nil {
				t.Fatal(err)
			}
			tick(t, clock, 5) // 09:01 to 09:05
			if n := len(jobTasks(t, svc, pid)); n != 5 {
				t.Fatalf("%d tasks before the downtime, want 5", n)
			}
			stop(t, srv)

			clock.Set(time.Date(2026, 3, 2, 9, 35, 30, 0, time.UTC)) // 30 runs (09:06 to 09:35) missed
			srv = start(t, dir, clock)
			defer stop(t, srv)
			svc = srv.Service
			if !clock.WaitForTimer(time.Date(2026, 3, 2, 9, 36, 0, 0, time.UTC), 10*time.Second) {
				t.Fatal("the scheduler did not catch up and wait for 09:36")
			}
			wantTasks, wantSkipped := 5, 30
			if policy == model.CatchUpRunOnce {
				wantTasks, wantSkipped = 6, 29
			}
			if n := len(jobTasks(t, svc, pid)); n != wantTasks {
				t.Fatalf("%d tasks after the restart, want %d", n, wantTasks)
			}
			skipped, catchUps := 0, 0
			for _, r := range runs(t, svc, pid, job.ID) {
				switch {
				case r.Outcome == model.RunSkipped:
					skipped++
					if r.Trigger != model.TriggerCatchUp || r.Reason == "" || r.TaskID != nil {
						t.Errorf("skipped run %+v", r)
					}
				case r.Trigger == model.TriggerCatchUp:
					catchUps++
					if r.Outcome != model.RunCreated || r.TaskID == nil || !r.ScheduledFor.Equal(time.Date(2026, 3, 2, 9, 35, 0, 0, time.UTC)) {
						t.Errorf("catch-up run %+v", r)
					}
				}
			}
			if skipped != wantSkipped || catchUps != wantTasks-5 {
				t.Fatalf("%d skipped and %d catch-up runs, want %d and %d", skipped, catchUps, wantSkipped, wantTasks-5)
			}
			tick(t, clock, 2) // 09:36, 09:37 on time again
			if n := len(jobTasks(t, svc, pid)); n != wantTasks+2 {
				t.Fatalf("%d tasks two minutes later, want %d", n, wantTasks+2)
			}
		})
	}
}

// TestSkillPickAndFailedRun: a job that picks its agent by skill gives the task to the
// agent with that skill and the fewest open tasks; with no such agent the run is
// recorded as failed, with the reason, and no task is made.
func TestSkillPickAndFailedRun(t *testing.T) { pgtest.Engines(t, testSkillPickAndFailedRun) }

func testSkillPickAndFailedRun(t *testing.T, engine string) {
	clock := jobstest.NewManualClock(time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC))
	srv := start(t, newSite(t, engine), clock)
	defer stop(t, srv)
	svc := srv.Service
	pid := project(t, svc)
	owner := auth.Owner(pid)
	ctx := context.Background()
	sk, err := svc.CreateSkill(ctx, owner, "triage", "")
	if err != nil {
		t.Fatal(err)
	}
	job, err := svc.CreateJob(ctx, owner, service.JobInput{Name: ptr("triage"), Cron: ptr("0 * * * *"), Summary: ptr("Triage"), Skill: ptr("triage")})
	if err != nil {
		t.Fatal(err)
	}
	run, err := svc.RunJobNow(ctx, owner, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Outcome != model.RunFailed || run.TaskID != nil || run.Reason == "" || run.Trigger != model.TriggerManual {
		t.Fatalf("run without an agent: %+v", run)
	}
	t.Logf("failed run: %s", run.Reason)
	a1, _ := svc.CreateAgent(ctx, owner, "a1")
	a2, _ := svc.CreateAgent(ctx, owner, "a2")
	for _, a := range []*model.Agent{a1, a2} {
		if _, _, err := svc.SetAgentSkill(ctx, owner, a.ID, sk.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	// a1 is busier, so a2 gets the first task, then they alternate.
	if _, err := svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "busy", AgentID: &a1.ID}, ""); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for range 3 {
		run, err := svc.RunJobNow(ctx, owner, job.ID)
		if err != nil || run.Outcome != model.RunCreated {
			t.Fatalf("run: %+v %v", run, err)
		}
		task, err := svc.GetTask(ctx, owner, *run.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if task.Source != model.SourceJob || len(task.RequiredSkills) != 1 || task.RequiredSkills[0] != "triage" {
			t.Fatalf("task %+v", task)
		}
		got = append(got, *task.AgentID)
	}
	if want := []int64{a2.ID, a1.ID, a2.ID}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("agents picked %v, want %v", got, want)
	}
}

// TestActivityFilledInTheBackground: a change reaches the activity trail within about a
// second, with no read of the trail to prompt it.
func TestActivityFilledInTheBackground(t *testing.T) {
	pgtest.Engines(t, testActivityFilledInTheBackground)
}

func testActivityFilledInTheBackground(t *testing.T, engine string) {
	srv := start(t, newSite(t, engine), jobstest.NewManualClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)))
	defer stop(t, srv)
	svc := srv.Service
	ctx := context.Background()
	if _, err := svc.CreateTask(ctx, auth.Owner(project(t, svc)), service.CreateTaskInput{Summary: "audited"}, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		behind, err := svc.Store().Read().ActivityBehind(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !behind {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the activity trail is still behind the events after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScheduleThatNeverFires: a cron expression with no next time (30 February) is
// refused on create and on update; a job stored by an older version with the zero time
// as its next run is "never": the scheduler records no run for it and goes on waiting
// for the other jobs instead of catching up since year 1 on every pass.
func TestScheduleThatNeverFires(t *testing.T) { pgtest.Engines(t, testScheduleThatNeverFires) }

func testScheduleThatNeverFires(t *testing.T, engine string) {
	dir := newSite(t, engine)
	clock := jobstest.NewManualClock(time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC))
	srv := start(t, dir, clock)
	svc := srv.Service
	pid := project(t, svc)
	owner := auth.Owner(pid)
	ctx := context.Background()

	_, err := svc.CreateJob(ctx, owner, service.JobInput{Name: ptr("never"), Cron: ptr("0 0 30 2 *"), Summary: ptr("Never")})
	if errs.CodeOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), "never fires") {
		t.Fatalf("create with 30 February: %v, want invalid_argument saying it never fires", err)
	}
	stale, err := svc.CreateJob(ctx, owner, service.JobInput{Name: ptr("stale"), Cron: ptr("0 9 * * *"), Summary: ptr("Stale")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.UpdateJob(ctx, owner, stale.ID, service.JobInput{Cron: ptr("0 0 31 4 *")})
	if errs.CodeOf(err) != errs.InvalidArgument {
		t.Fatalf("update to 31 April: %v, want invalid_argument", err)
	}
	if _, err := svc.CreateJob(ctx, owner, service.JobInput{Name: ptr("beat"), Cron: ptr("* * * * *"), Summary: ptr("Beat")}); err != nil {
		t.Fatal(err)
	}
	stop(t, srv)

	// What an older version stored for createJob(cron: "0 0 30 2 *").
	editDB(t, dir, `UPDATE jobs SET cron = '0 0 30 2 *', next_run_at = '0001-01-01T00:00:00.000000Z' WHERE id = ?`, stale.ID)

	srv = start(t, dir, clock)
	defer stop(t, srv)
	svc = srv.Service
	tick(t, clock, 2) // fails if the scheduler spins on the zero time
	if rs := runs(t, svc, pid, stale.ID); len(rs) != 0 {
		t.Fatalf("the never-firing job has %d runs, want none", len(rs))
	}
	if n := len(jobTasks(t, svc, pid)); n != 2 {
		t.Fatalf("%d tasks after two minutes, want 2 (the every-minute job's)", n)
	}
	j, err := svc.Job(ctx, owner, stale.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.NextRunAt != nil {
		t.Fatalf("next run %v, want none (never)", j.NextRunAt)
	}
}

// TestFailingPassIsRetriedLater: a job whose run keeps failing (here a cron expression
// made unreadable behind the service's back; a database refusing writes does the same)
// stays due; the scheduler tries it again after RetryAfter instead of spinning.
func TestFailingPassIsRetriedLater(t *testing.T) { pgtest.Engines(t, testFailingPassIsRetriedLater) }

func testFailingPassIsRetriedLater(t *testing.T, engine string) {
	dir := newSite(t, engine)
	start0 := time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC)
	clock := jobstest.NewManualClock(start0)
	srv := start(t, dir, clock)
	svc := srv.Service
	job, err := svc.CreateJob(context.Background(), auth.Owner(project(t, svc)), service.JobInput{Name: ptr("broken"), Cron: ptr("* * * * *"), Summary: ptr("Broken")})
	if err != nil {
		t.Fatal(err)
	}
	stop(t, srv)
	editDB(t, dir, `UPDATE jobs SET cron = 'not a cron', next_run_at = '2026-03-02T09:00:00.000000Z' WHERE id = ?`, job.ID)

	srv = start(t, dir, clock)
	defer stop(t, srv)
	if !clock.WaitForTimer(start0.Add(jobs.RetryAfter), 10*time.Second) {
		t.Fatalf("the scheduler is not waiting %s to retry the failing job", jobs.RetryAfter)
	}
}

// TestOldEventsAndKeysPrunedAtStart: a server forgets, as it starts, the events past
// their retention (7 days, by real time) and the Idempotency-Keys past theirs (24 hours,
// by the server's clock), without waiting for the hourly pass.
func TestOldEventsAndKeysPrunedAtStart(t *testing.T) {
	pgtest.Engines(t, testOldEventsAndKeysPrunedAtStart)
}

func testOldEventsAndKeysPrunedAtStart(t *testing.T, engine string) {
	dir := newSite(t, engine)
	ctx := context.Background()
	srv := start(t, dir, jobstest.NewManualClock(time.Now().Add(-10*24*time.Hour)))
	pid := project(t, srv.Service)
	if _, err := srv.Service.CreateTask(ctx, auth.Owner(pid), service.CreateTaskInput{Summary: "long ago"}, "old-key"); err != nil {
		t.Fatal(err)
	}
	stop(t, srv)

	srv = start(t, dir, jobstest.NewManualClock(time.Now()))
	defer stop(t, srv)
	r := srv.Service.Store().Read()
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs, err := r.EventsSince(ctx, pid, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		_, _, keyErr := r.IdempotentResult(ctx, pid, "old-key")
		if len(evs) == 0 && errors.Is(keyErr, store.ErrNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the start: %d old events, key lookup %v", len(evs), keyErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
