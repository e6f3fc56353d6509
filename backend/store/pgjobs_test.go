package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// jobsDB is a migrated database with one project and n jobs, all due at t0 and every
// minute after (the advance below); and a second pool on it, standing for another server.
func jobsDB(t *testing.T, n int, t0 time.Time) (first, second *sql.DB) {
	t.Helper()
	ctx := context.Background()
	rawURL := pgtest.DB(t)
	var err error
	if first, err = postgres.Open(ctx, rawURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	if second, err = postgres.Open(ctx, rawURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	if _, err := first.Exec(`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('p', 'p', 'default', 's', '')`); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Exec(`INSERT INTO jobs (project_id, name, cron, timezone, summary, catch_up, next_run_at, created_at, updated_at)
		SELECT 'p', 'job ' || i, '* * * * *', 'UTC', 'run ' || i, 'skip', $1, '', '' FROM generate_series(1, $2) i`, fmtTime(t0), n); err != nil {
		t.Fatal(err)
	}
	return first, second
}

// runClaimed is what the scheduler does with a claimed job, in the claim's transaction:
// record the run and advance next_run_at (here: by a minute).
func runClaimed(ctx context.Context, tx *sql.Tx, j *model.Job, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO job_runs (job_id, scheduled_for, ran_at, outcome, trigger) VALUES ($1, $2, $3, 'created', 'schedule')`,
		j.ID, fmtTime(*j.NextRunAt), fmtTime(now)); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET next_run_at = $1, last_run_at = $2 WHERE id = $3`,
		fmtTime(j.NextRunAt.Add(time.Minute)), fmtTime(now), j.ID)
	return err
}

// runKey is one scheduled run of one job.
type runKey struct {
	job int64
	at  time.Time
}

// TestPostgresJobsClaimedOnce: two servers (two pools on one database) run the
// scheduler's pass at the same moments over many due jobs, round after round; every
// scheduled run is claimed by exactly one of them, none is left due, and none runs
// twice: the due list read first, then each job claimed in its own transaction
// (claimJob, what RunDueJobs' per-job write does).
func TestPostgresJobsClaimedOnce(t *testing.T) {
	const jobs, rounds = 60, 15
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

	passes := map[string]func(ctx context.Context, db *sql.DB, now time.Time, ran func(runKey)) error{
		"each": func(ctx context.Context, db *sql.DB, now time.Time, ran func(runKey)) error {
			// The due list, read without locks, as Reader.DueJobs reads it.
			var list []int64
			rows, err := db.QueryContext(ctx, `SELECT j.id FROM jobs j`+dueJobsWhere+` ORDER BY j.next_run_at, j.id`, fmtTime(now), neverRun)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				list = append(list, id)
			}
			if err := rows.Close(); err != nil {
				return err
			}
			for _, id := range list {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				j, err := claimJob(ctx, tx, "p", id, now)
				if errors.Is(err, ErrNotFound) {
					tx.Rollback() // the other server has it, or had it
					continue
				}
				if err == nil {
					err = runClaimed(ctx, tx, j, now)
				}
				if err == nil {
					err = tx.Commit()
				} else {
					tx.Rollback()
				}
				if err != nil {
					return err
				}
				ran(runKey{j.ID, *j.NextRunAt})
			}
			return nil
		},
	}
	for name, pass := range passes {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			first, second := jobsDB(t, jobs, t0)
			var mu sync.Mutex
			claims := map[runKey]int{}
			byServer := [2]int{}
			for r := range rounds {
				now := t0.Add(time.Duration(r) * time.Minute)
				var wg sync.WaitGroup
				for s, db := range []*sql.DB{first, second} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := pass(ctx, db, now, func(k runKey) {
							mu.Lock()
							claims[k]++
							byServer[s]++
							mu.Unlock()
						}); err != nil {
							t.Errorf("server %d, round %d: %v", s+1, r, err)
						}
					}()
				}
				wg.Wait()
				if t.Failed() {
					return
				}
				var left int
				if err := first.QueryRow(`SELECT count(*) FROM jobs j`+dueJobsWhere, fmtTime(now), neverRun).Scan(&left); err != nil {
					t.Fatal(err)
				}
				if left != 0 {
					t.Fatalf("round %d: %d jobs still due after both passes", r, left)
				}
			}
			var twice []string
			for k, n := range claims {
				if n != 1 {
					twice = append(twice, fmt.Sprintf("job %d at %s: %d times", k.job, k.at.Format("15:04"), n))
				}
			}
			if len(twice) > 0 {
				t.Errorf("%d runs claimed more than once, e.g. %v", len(twice), twice[:min(5, len(twice))])
			}
			var stored, distinct int
			if err := first.QueryRow(`SELECT count(*), count(DISTINCT (job_id, scheduled_for)) FROM job_runs`).Scan(&stored, &distinct); err != nil {
				t.Fatal(err)
			}
			if want := jobs * rounds; len(claims) != want || stored != want || distinct != want {
				t.Errorf("runs: %d claimed, %d stored, %d distinct; want %d each", len(claims), stored, distinct, want)
			}
			t.Logf("runs claimed by the first server: %d, by the second: %d", byServer[0], byServer[1])
		})
	}
}

// TestPostgresClaimSkipsHeld: a job one transaction has claimed is not claimed by
// another while the first holds it (nor waited for); once the first commits its advance
// it is no longer due; if the first rolls back, it is due again and claimable.
func TestPostgresClaimSkipsHeld(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	first, second := jobsDB(t, 1, t0)

	claim := func(db *sql.DB) (*sql.Tx, []model.Job) {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		j, err := claimJob(ctx, tx, "p", 1, t0)
		if errors.Is(err, ErrNotFound) {
			return tx, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return tx, []model.Job{*j}
	}

	held, due := claim(first)
	if len(due) != 1 || due[0].Name != "job 1" || due[0].NextRunAt == nil || !due[0].NextRunAt.Equal(t0) || len(due[0].Steps) != 0 {
		t.Fatalf("first claim: %+v", due)
	}
	other, got := claim(second)
	if len(got) != 0 {
		t.Errorf("a held job was claimed again: %+v", got)
	}
	tx2, err := second.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claimJob(ctx, tx2, "p", due[0].ID, t0); !errors.Is(err, ErrNotFound) {
		t.Errorf("claimJob of a held job: %v, want ErrNotFound", err)
	}
	tx2.Rollback()
	other.Rollback()

	held.Rollback() // the server running it failed: the run is still due
	again, got := claim(second)
	if len(got) != 1 || got[0].ID != due[0].ID {
		t.Fatalf("after the holder rolled back: %+v, want the job again", got)
	}
	if err := runClaimed(ctx, again, &got[0], t0); err != nil {
		t.Fatal(err)
	}
	if err := again.Commit(); err != nil {
		t.Fatal(err)
	}
	after, got := claim(first)
	defer after.Rollback()
	if len(got) != 0 {
		t.Errorf("after the run was committed: %+v still due", got)
	}
}
