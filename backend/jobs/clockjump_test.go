package jobs_test

import (
	"context"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
)

// allRuns is every recorded run of a job, oldest first.
func allRuns(t *testing.T, svc *service.Service, pid string, jobID int64) []model.JobRun {
	t.Helper()
	var out []model.JobRun
	for before := int64(0); ; {
		page, err := svc.JobRuns(context.Background(), auth.Owner(pid), jobID, before, service.MaxListLimit)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if len(page) < service.MaxListLimit {
			break
		}
		before = page[len(page)-1].ID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// moreSkipped finds, in the last skipped run's reason, the missed runs not recorded one
// by one (past 1,000).
var moreSkipped = regexp.MustCompile(`(\d+) earlier missed runs were skipped too`)

// TestWallClockJumps: the system clock is set back an hour, then forward a day, while
// the server runs. No job fires twice for the same scheduled time; jobs created in the
// repeated hour run on time in it (they are not taken for runs missed while agentdesk
// was down); the day jumped over follows each job's catch-up policy; tokens and
// sessions end at their wall-clock times.
func TestWallClockJumps(t *testing.T) {
	ctx := context.Background()
	day1 := func(h, m int) time.Time { return time.Date(2026, 3, 2, h, m, 0, 0, time.UTC) }
	day2 := func(h, m int) time.Time { return day1(h, m).Add(24 * time.Hour) }
	clock := jobstest.NewManualClock(day1(9, 0).Add(10 * time.Second))
	srv, err := server.Start(ctx, server.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Clock: clock,
		PublicURL: "https://agentdesk.example.com", OIDC: auth.OIDC{PublicURL: "https://agentdesk.example.com",
			Issuer: "https://id.example.com", ClientID: "agentdesk", AllowedDomains: []string{"corp.example"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop(t, srv)
	svc := srv.Service
	pid := project(t, svc)
	owner := auth.Owner(pid)
	newJob := func(name, cron, policy string) *model.Job {
		t.Helper()
		j, err := svc.CreateJob(ctx, owner, service.JobInput{Name: ptr(name), Cron: ptr(cron), Summary: ptr(name), CatchUp: ptr(policy)})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	newToken := func(name string, expires *time.Time) string {
		t.Helper()
		v, _, err := svc.CreateToken(ctx, owner, service.CreateTokenInput{Name: name, Scopes: []string{auth.TaskRead}, ExpiresAt: expires})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// live checks a token or a session cookie against the server's rules now.
	live := func(cred service.Credentials) error {
		cred.Where, cred.Method = service.WhereREST, "GET"
		_, err := svc.Authenticate(ctx, cred)
		if err != nil && errs.CodeOf(err) != errs.Unauthenticated {
			t.Fatalf("authenticate: %v", err)
		}
		return err
	}
	wantLive := func(when, what string, cred service.Credentials) {
		t.Helper()
		if err := live(cred); err != nil {
			t.Errorf("%s: %s refused: %v", when, what, err)
		}
	}
	wantEnded := func(when, what string, cred service.Credentials, says string) {
		t.Helper()
		if err := live(cred); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %s: %v, want refused saying %q", when, what, err, says)
		}
	}

	minutely := newJob("minutely", "* * * * *", model.CatchUpSkip)
	hourly := newJob("hourly", "0 * * * *", model.CatchUpRunOnce)
	tok0908 := service.Credentials{Authorization: "Bearer " + newToken("until 09:08", ptr(day1(9, 8)))}
	tok0930 := service.Credentials{Authorization: "Bearer " + newToken("until 09:30", ptr(day1(9, 30)))}
	tokNever := service.Credentials{Authorization: "Bearer " + newToken("no expiry", nil)}
	cookie, err := svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "s1", Email: "lee@corp.example", EmailVerified: true, Name: "Lee"})
	if err != nil {
		t.Fatal(err)
	}
	session := service.Credentials{Session: cookie}

	tick(t, clock, 5) // 09:01 to 09:05
	wantLive("09:05", "session", session)

	// The clock is set back an hour: 09:05 -> 08:05. The minutely job has run 09:01 to
	// 09:05 and must not run them again; jobs created now run from 08:06 and 08:30.
	clock.Jump(-time.Hour)
	lateMinutely := newJob("created in the repeated hour", "* * * * *", model.CatchUpSkip)
	halfPast := newJob("half past, created in the repeated hour", "30 * * * *", model.CatchUpSkip)
	wantLive("08:05 (set back)", "token until 09:08", tok0908)
	wantLive("08:05 (set back)", "session", session)
	tick(t, clock, 65) // 08:06 to 09:10
	wantEnded("09:10", "token until 09:08", tok0908, "expired")
	wantLive("09:10", "token until 09:30", tok0930)

	// Forward a day: 09:10 -> 09:10 the next day. The runs of the day jumped over were
	// missed (catch-up policy); those at most MissedAfter late run on time.
	clock.Jump(24 * time.Hour)
	tick(t, clock, 1) // 09:11 on day 2
	wantEnded("day 2", "token until 09:30 of day 1", tok0930, "expired")
	wantLive("day 2", "token without expiry", tokNever)
	wantLive("day 2", "session (a day old)", session) // and used: its idle time starts again

	// The runs: each scheduled time at most once, and the ones expected.
	minutes := func(from, to time.Time) []time.Time {
		var out []time.Time
		for at := from; !at.After(to); at = at.Add(time.Minute) {
			out = append(out, at)
		}
		return out
	}
	type want struct {
		job     *model.Job
		created []time.Time // in order
		missed  int         // recorded as skipped, or counted in the last skipped run's reason
	}
	for _, w := range []want{
		{minutely, append(minutes(day1(9, 1), day1(9, 10)), minutes(day2(9, 9), day2(9, 11))...), 1438},
		{lateMinutely, append(minutes(day1(8, 6), day1(9, 10)), minutes(day2(9, 9), day2(9, 11))...), 1438},
		// 10:00 of day 1 to 09:00 of day 2 missed: one catch-up run for the latest.
		{hourly, []time.Time{day2(9, 0)}, 23},
		{halfPast, []time.Time{day1(8, 30)}, 24}, // 09:30 of day 1 to 08:30 of day 2 skipped
	} {
		rs := allRuns(t, svc, pid, w.job.ID)
		seen := map[time.Time]bool{}
		var created []time.Time
		missed := 0
		for _, r := range rs {
			if seen[r.ScheduledFor] {
				t.Errorf("job %q: %s ran twice", w.job.Name, r.ScheduledFor.Format(time.RFC3339))
			}
			seen[r.ScheduledFor] = true
			switch r.Outcome {
			case model.RunCreated:
				if r.TaskID == nil {
					t.Errorf("job %q: created run without a task: %+v", w.job.Name, r)
				}
				created = append(created, r.ScheduledFor)
			case model.RunSkipped:
				missed++
				if m := moreSkipped.FindStringSubmatch(r.Reason); m != nil {
					n, _ := strconv.Atoi(m[1])
					missed += n
				}
			default:
				t.Errorf("job %q: run %+v", w.job.Name, r)
			}
		}
		if len(created) != len(w.created) || missed != w.missed {
			t.Errorf("job %q: %d created runs and %d missed, want %d and %d (created: %v)", w.job.Name, len(created), missed,
				len(w.created), w.missed, created)
			continue
		}
		for i := range created {
			if !created[i].Equal(w.created[i]) {
				t.Errorf("job %q: created run %d for %s, want %s", w.job.Name, i, created[i].Format(time.RFC3339), w.created[i].Format(time.RFC3339))
			}
		}
	}

	// A week on without use: the session ends, idle, at its wall-clock time.
	clock.Jump(service.SessionIdle)
	wantEnded("a week later", "session", session, "unused")
}
