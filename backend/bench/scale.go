package main

// The scale mode (issue 25): `go run ./backend/bench -bin bin/agentdesk -scale 1000000`,
// or `make bench-scale`. It makes two projects in one data directory, a small one
// (-scale-small tasks, 10,000 by default) and a big one (-scale tasks), each task with two
// steps and its task.created event, written straight into the store in large
// transactions (the bulk path: creating a million tasks over HTTP would take the run's
// whole time; the rows are those the service writes). Then it starts the real server and
// measures, on both projects, p50 and p99 of sequential requests:
//
//   - list50: GET /api/tasks?limit=50 (the first page), and list50_last: the page
//     after the ten-thousandth-from-last id;
//   - filter: GET /api/tasks?status=Waiting&limit=50;
//   - done_desc: GET /api/tasks?status=Done&order=desc&limit=50 (the board's Done column);
//   - counts: GET /api/tasks/counts;
//   - search: GET /api/tasks?q=WORD&limit=50, WORD in one task out of a thousand;
//   - get: GET /api/tasks/{id} of random ids.
//
// Each big figure is reported with its ratio to the small one (ratio_NAME). Then the
// unpaged list of the big project (every task, streamed) is read once: its MB/s and the
// server's RSS before, during (sampled every 100 ms) and its peak after. Then the server
// is stopped and started again, three times: restart_to_ready_ms is the best time from
// exec to the first 200 of /healthz (polled every 2 ms), with the server's idle RSS.
// The database's bytes per task come from SQLite's dbstat table (the tasks and their
// search index, the events, the activity, and their indexes), after the activity and the
// search index (both filled in the background) have caught up.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	agentserver "github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/store"
)

// scaleStatus is the status of the i-th task: 90% Done, the rest spread over the others.
func scaleStatus(i int) string {
	if i%10 != 0 {
		return model.StatusDone
	}
	return []string{model.StatusBacklog, model.StatusTodo, model.StatusDoing, model.StatusWaiting, model.StatusFailed}[(i/10)%5]
}

// scaleSearchWord is the word of the timed search: one task out of a thousand holds it.
const scaleSearchWord = "zqxbench"

// bulkFill writes n tasks (two steps, an event each) into the project, 5,000 a
// transaction, and returns the time it took. The tasks and their events are made at now.
func bulkFill(ctx context.Context, st *store.Store, p project, n int, words []string, now time.Time) (time.Duration, error) {
	start := time.Now()
	now = now.UTC()
	details := "Made by the scale benchmark: a task with two steps, as agents make them every day."
	const batch = 5000
	for i := 0; i < n; i += batch {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		err := st.Write(ctx, store.Author{}, func(tx *store.Tx) error {
			for j := i; j < min(i+batch, n); j++ {
				summary := fmt.Sprintf("%s %s task %d", words[j%len(words)], words[(j*7+3)%len(words)], j)
				if j%1000 == 500 {
					summary += " " + scaleSearchWord
				}
				task := &model.Task{ProjectID: p.id, Summary: summary, Details: details, Status: scaleStatus(j),
					Source: model.SourceAgent, TaskType: model.DefaultTaskType, CreatedAt: now, UpdatedAt: now,
					Steps: []model.Step{{Title: "read the issue", Status: model.StepCompleted}, {Title: "write the fix", Status: model.StepPending}}}
				if task.Status != model.StatusBacklog {
					task.AgentID, task.AgentName = &p.agent, "worker"
				}
				if task.Status == model.StatusWaiting {
					q := "Which branch?"
					task.WaitingDetails, task.WaitingVersion = &q, 1
				}
				if err := tx.InsertTask(ctx, task); err != nil {
					return err
				}
				task.Derive()
				if err := tx.AppendEvent(ctx, p.id, "task.created", model.TaskEvent{Task: task}, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		if (i/batch)%40 == 39 {
			logf("  %d of %d tasks written (%.0f/s)", i+batch, n, float64(i+batch)/time.Since(start).Seconds())
		}
	}
	return time.Since(start), nil
}

func runScale(ctx context.Context, cfg config) int {
	dir, done, err := dataDir(cfg, "agentdesk-bench-scale-")
	if err != nil {
		logf("bench: %v", err)
		return 1
	}
	defer done()
	fail := func(err error) int {
		logf("bench: %v", err)
		return 1
	}
	srv := &server{bin: cfg.bin, dir: dir, poll: 2 * time.Millisecond}
	small, err := srv.newProject("scale-small")
	if err != nil {
		return fail(err)
	}
	big, err := srv.newProject("scale-big")
	if err != nil {
		return fail(err)
	}
	out := map[string]any{"scale_tasks": cfg.scale, "scale_small_tasks": cfg.scaleSmall, "cores": runtime.NumCPU()}

	// 1. The bulk fill, straight into the store.
	st, err := store.Open(ctx, agentserver.DBPath(dir), store.Options{Synchronous: "NORMAL"})
	if err != nil {
		return fail(err)
	}
	words := vocabulary(5000)
	logf("writing %d + %d tasks (two steps and an event each) into %s", cfg.scaleSmall, cfg.scale, dir)
	if _, err := bulkFill(ctx, st, small, cfg.scaleSmall, words, time.Now()); err != nil {
		st.Close()
		return fail(err)
	}
	took, err := bulkFill(ctx, st, big, cfg.scale, words, time.Now())
	st.Close()
	if err != nil {
		return fail(err)
	}
	out["scale_bulk_tasks_per_s"] = round(float64(cfg.scale)/took.Seconds(), 0)
	logf("  %d tasks in %.1f s (%.0f tasks/s, bulk: 5,000 a transaction)", cfg.scale, took.Seconds(), float64(cfg.scale)/took.Seconds())

	// 2. The server; the activity trail catches up with the million events first.
	raiseFileLimit()
	t := time.Now()
	if err := srv.start(ctx, cfg.synchronous); err != nil {
		return fail(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = srv.stop()
		}
	}()
	out["scale_first_start_ms"] = round(float64(time.Since(t).Microseconds())/1000, 1)
	t = time.Now()
	if err := waitActivity(ctx, dir); err != nil {
		return fail(err)
	}
	logf("server ready in %.0f ms; the activity trail and the search index caught up in %.1f s", out["scale_first_start_ms"], time.Since(t).Seconds())
	out["scale_activity_catch_up_s"] = round(time.Since(t).Seconds(), 1)

	// 3. Sequential latencies on both projects.
	l := newLoader(srv.url())
	r := &report{values: map[string][]float64{}, errored: map[string]bool{}}
	for _, pr := range []struct {
		name string
		p    project
		n    int
	}{{"small", small, cfg.scaleSmall}, {"big", big, cfg.scale}} {
		ids, err := pageIDs(l, pr.p.token, "/api/tasks?limit=1")
		if err != nil || len(ids) != 1 {
			return fail(fmt.Errorf("first task of %s: %v %v", pr.name, ids, err))
		}
		lo := ids[0]
		hi := lo + int64(pr.n) - 1
		lastPage := fmt.Sprintf("/api/tasks?limit=50&after_id=%d", hi-10_000)
		if pr.n <= 10_000 {
			lastPage = fmt.Sprintf("/api/tasks?limit=50&after_id=%d", hi-100)
		}
		paths := []struct{ name, path string }{
			{"list50", "/api/tasks?limit=50"},
			{"list50_last", lastPage},
			{"filter", "/api/tasks?status=Waiting&limit=50"},
			{"done_desc", "/api/tasks?status=Done&order=desc&limit=50"},
			{"counts", "/api/tasks/counts"},
			{"search", "/api/tasks?q=" + scaleSearchWord + "&limit=50"},
		}
		logf("\n%s project: %d tasks (ids %d to %d)", pr.name, pr.n, lo, hi)
		for _, ph := range paths {
			p := l.latency(ctx, cfg.warmup, cfg.latencyN, func() error { return l.do("GET", ph.path, pr.p.token, nil, http.StatusOK) })
			logLatency(pr.name+" GET "+ph.path, p)
			r.add(pr.name+"_"+ph.name+"_p50_ms", p.p50)
			r.add(pr.name+"_"+ph.name+"_p99_ms", p.p99)
			r.check(pr.name+" "+ph.name, p, pr.name+"_"+ph.name+"_p50_ms")
		}
		rnd := rand.New(rand.NewPCG(1, 2))
		p := l.latency(ctx, cfg.warmup, cfg.latencyN, func() error {
			return l.do("GET", "/api/tasks/"+strconv.FormatInt(lo+rnd.Int64N(int64(pr.n)), 10), pr.p.token, nil, http.StatusOK)
		})
		logLatency(pr.name+" GET /api/tasks/{id}", p)
		r.add(pr.name+"_get_p50_ms", p.p50)
		r.add(pr.name+"_get_p99_ms", p.p99)
		r.check(pr.name+" get", p, pr.name+"_get_p50_ms")
	}
	for _, name := range r.order {
		out[name] = round(r.values[name][0], 3)
	}
	logf("\n%-16s %10s %10s %8s", "p50 (ms)", "small", "big", "big/small")
	for _, name := range []string{"list50", "list50_last", "filter", "done_desc", "counts", "search", "get"} {
		s, b := r.values["small_"+name+"_p50_ms"][0], r.values["big_"+name+"_p50_ms"][0]
		out["ratio_"+name] = round(b/s, 2)
		logf("%-16s %10.3f %10.3f %8.2f", name, s, b, b/s)
	}

	// 4. The whole list of the big project, streamed.
	rssBefore, hwmBefore, _ := srv.memory()
	stopSampling := sampleRSS(srv)
	t = time.Now()
	req, _ := http.NewRequest("GET", srv.url()+"/api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+big.token)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return fail(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	elapsed := time.Since(t)
	rssDuring := stopSampling()
	_, hwmAfter, _ := srv.memory()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("the unpaged list: %d %v", resp.StatusCode, err))
	}
	out["unpaged_list_mb"] = round(float64(n)/1e6, 1)
	out["unpaged_list_mb_per_s"] = round(float64(n)/1e6/elapsed.Seconds(), 1)
	out["unpaged_list_s"] = round(elapsed.Seconds(), 2)
	out["unpaged_list_rss_before_mib"] = round(rssBefore, 1)
	out["unpaged_list_rss_max_mib"] = round(rssDuring, 1)
	out["unpaged_list_peak_rss_growth_mib"] = round(max(hwmAfter-hwmBefore, 0), 1)
	out["unpaged_list_peak_rss_mib"] = round(hwmAfter, 1)
	logf("\nthe unpaged list of %d tasks: %.1f MB in %.2f s (%.1f MB/s); RSS %.1f MiB before, at most %.1f MiB sampled during, peak %.1f MiB (%.1f before)",
		cfg.scale, float64(n)/1e6, elapsed.Seconds(), float64(n)/1e6/elapsed.Seconds(), rssBefore, rssDuring, hwmAfter, hwmBefore)

	// 5. Restart to ready, three times; the best.
	var restarts []float64
	var idle float64
	for range 3 {
		if _, err := srv.stop(); err != nil {
			return fail(err)
		}
		t := time.Now()
		if err := srv.start(ctx, cfg.synchronous); err != nil {
			return fail(err)
		}
		restarts = append(restarts, float64(time.Since(t).Microseconds())/1000)
		time.Sleep(time.Second) // the idle RSS, once its start-up work is done
		idle, _, _ = srv.memory()
	}
	out["restart_to_ready_ms"] = round(slices.Min(restarts), 1)
	out["restart_to_ready_ms_runs"] = roundAll(restarts)
	out["idle_rss_mib"] = round(idle, 1)
	logf("restart to ready: %v ms (best %.1f); idle RSS %.1f MiB", roundAll(restarts), slices.Min(restarts), idle)
	// 6. Bytes per task (the database as the million tasks left it), then Clear done.
	sizes, sizeErr := tableBytes(agentserver.DBPath(dir))
	if err := deleteDone(ctx, srv, l, big, dir, out); err != nil {
		return fail(err)
	}
	stopped = true
	if _, err := srv.stop(); err != nil {
		return fail(err)
	}

	if sizeErr != nil {
		logf("bytes per task: %v (dbstat)", sizeErr)
	} else {
		total := cfg.scale + cfg.scaleSmall
		var all int64
		var parts []string
		for _, s := range sizes {
			all += s.bytes
			if s.bytes >= int64(total) { // at least a byte a task
				parts = append(parts, fmt.Sprintf("%s %.0f", s.name, float64(s.bytes)/float64(total)))
				out["bytes_per_task_"+s.name] = round(float64(s.bytes)/float64(total), 0)
			}
		}
		out["bytes_per_task"] = round(float64(all)/float64(total), 0)
		logf("database: %.0f bytes per task: %s", float64(all)/float64(total), strings.Join(parts, ", "))
	}
	return printScale(cfg, out, r)
}

// deleteDone times DELETE /api/tasks/done on the big project (its 90% Done tasks), the
// server's peak RSS around it, the background catch-up of the search index and the
// activity after it, and the database file before and after with its free pages.
func deleteDone(ctx context.Context, srv *server, l *loader, p project, dir string, out map[string]any) error {
	path := agentserver.DBPath(dir)
	before, err := fileAndFree(path)
	if err != nil {
		return err
	}
	_, hwmBefore, _ := srv.memory()
	t := time.Now()
	var answer struct{ Deleted int }
	req, _ := http.NewRequest("DELETE", srv.url()+"/api/tasks/done", nil)
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := (&http.Client{Timeout: 30 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("DELETE /api/tasks/done: %d %v", resp.StatusCode, err)
	}
	took := time.Since(t)
	_, hwmAfter, _ := srv.memory()
	t = time.Now()
	if err := waitActivity(ctx, dir); err != nil {
		return err
	}
	catchUp := time.Since(t)
	after, err := fileAndFree(path)
	if err != nil {
		return err
	}
	out["delete_done_tasks"] = answer.Deleted
	out["delete_done_s"] = round(took.Seconds(), 1)
	out["delete_done_peak_rss_growth_mib"] = round(max(hwmAfter-hwmBefore, 0), 1)
	out["delete_done_catch_up_s"] = round(catchUp.Seconds(), 1)
	out["db_file_mb"] = round(before.file/1e6, 1)
	out["db_file_mb_after_delete"] = round(after.file/1e6, 1)
	out["db_free_mb_after_delete"] = round(after.free/1e6, 1)
	logf("\nClear done: %d tasks deleted in %.1f s (peak RSS %.1f -> %.1f MiB); the search index and activity caught up in %.1f s",
		answer.Deleted, took.Seconds(), hwmBefore, hwmAfter, catchUp.Seconds())
	logf("database file: %.1f MB before, %.1f MB after, %.1f MB of it free pages (reused by later writes; no auto_vacuum)",
		before.file/1e6, after.file/1e6, after.free/1e6)
	return nil
}

type fileSpace struct{ file, free float64 }

// fileAndFree is the database file's size (its WAL checkpointed in by the server, or
// not yet) and the bytes of its free pages.
func fileAndFree(path string) (fileSpace, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileSpace{}, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return fileSpace{}, err
	}
	defer db.Close()
	var free, size int64
	if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
		return fileSpace{}, err
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		return fileSpace{}, err
	}
	return fileSpace{file: float64(fi.Size()), free: float64(free * size)}, nil
}

// pageIDs reads the ids of one page of tasks.
func pageIDs(l *loader, token, path string) ([]int64, error) {
	req, err := http.NewRequest("GET", l.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := l.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var page []struct{ ID int64 }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, err
	}
	ids := make([]int64, len(page))
	for i, t := range page {
		ids[i] = t.ID
	}
	return ids, nil
}

// waitActivity waits until every project's activity trail has caught up with its events,
// and the search index with the tasks (both are filled in the background).
func waitActivity(ctx context.Context, dir string) error {
	db, err := sql.Open("sqlite", "file:"+agentserver.DBPath(dir)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		var behind int64
		if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(event_seq - activity_seq), 0) + (SELECT COUNT(*) FROM tasks_fts_pending) FROM projects`).Scan(&behind); err != nil {
			return err
		}
		if behind == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("the activity trail did not catch up with the events in 10 minutes")
}

type tableSize struct {
	name  string
	bytes int64
}

// tableBytes is the space each table and index takes in the database (SQLite's dbstat),
// largest first; an FTS5 index's shadow tables count under the index's name.
func tableBytes(path string) ([]tableSize, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	by := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, "tasks_fts") {
			name = "tasks_fts"
		}
		by[name] += n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]tableSize, 0, len(by))
	for name, n := range by {
		out = append(out, tableSize{name, n})
	}
	slices.SortFunc(out, func(a, b tableSize) int { return int(b.bytes - a.bytes) })
	return out, nil
}

// printScale ends the scale run: the JSON line (to stdout and -json-out).
func printScale(cfg config, out map[string]any, r *report) int {
	out["errors"] = r.errors
	out["flagged_phases"] = append([]string{}, r.flagged...)
	line, err := json.Marshal(out)
	if err != nil {
		logf("bench: %v", err)
		return 1
	}
	fmt.Println(string(line))
	if cfg.jsonOut != "" {
		if err := os.WriteFile(filepath.Clean(cfg.jsonOut), append(line, '\n'), 0o644); err != nil {
			logf("bench: %v", err)
			return 1
		}
	}
	if len(r.flagged) > 0 {
		return 1
	}
	return 0
}
