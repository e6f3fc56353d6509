package main

// Two more uses of the scale mode's bulk write (scale.go):
//
//   - -scale N -scale-seed DIR only writes the two projects (-scale-small and N tasks)
//     into DIR and exits, for the web UI's board test against a million tasks
//     (`make bench-ui-scale`: frontend/e2e/run.mjs with AGENTDESK_E2E_DATA=DIR).
//     -scale-age D makes the tasks and their events D old.
//   - -scale N -scale-prune measures the event log's and the activity trail's pruning
//     when every row is past retention (the rows are written 100 days old): each pass
//     alone on a freshly started server (the events first, with --activity-retention
//     set far out so that only they go; then the activity), its time, the latencies of
//     creates made one after another during it (the writer's longest hold is their
//     max), and the server's RSS. -scale-data DIR starts from a directory seeded before
//     (with -scale-age 2400h: more than 91 days), which the run then prunes.
//
// In both, the activity trail and the search index are brought up to date in the store
// before any server starts, as a server that had run all along would have them.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	agentserver "github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/store"
)

// scaleSeed is what -scale-seed leaves in DIR/scale.json: the projects and their tokens.
type scaleSeed struct {
	Small scaleSeedProject `json:"small"`
	Big   scaleSeedProject `json:"big"`
	// The last event and activity row the seed wrote (the pruning run waits until every
	// row up to them has gone).
	LastEvent    int64 `json:"last_event"`
	LastActivity int64 `json:"last_activity"`
}

type scaleSeedProject struct {
	ID    string `json:"id"`
	Token string `json:"token"`
	Tasks int    `json:"tasks"`
}

// seedScale writes the two projects into dir (new or empty), their tasks and events made
// age ago, fills the activity trail and the search index, and writes dir/scale.json.
func seedScale(ctx context.Context, cfg config, dir string, age time.Duration) (scaleSeed, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return scaleSeed{}, err
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		return scaleSeed{}, fmt.Errorf("-scale-seed %s: want a new or empty directory (%v)", dir, err)
	}
	srv := &server{bin: cfg.bin, dir: dir}
	small, err := srv.newProject("scale-small")
	if err != nil {
		return scaleSeed{}, err
	}
	big, err := srv.newProject("scale-big")
	if err != nil {
		return scaleSeed{}, err
	}
	at := time.Now().Add(-age)
	if age > 0 {
		// The command line's events (the projects, tokens and agents made just now) are
		// made as old as the rest: pruning expects the events in time order.
		if err := ageEvents(ctx, dir, at); err != nil {
			return scaleSeed{}, err
		}
	}
	st, err := store.Open(ctx, agentserver.DBPath(dir), store.Options{Synchronous: "NORMAL"})
	if err != nil {
		return scaleSeed{}, err
	}
	defer st.Close()
	words := vocabulary(5000)
	logf("writing %d + %d tasks (two steps and an event each, made %s ago) into %s", cfg.scaleSmall, cfg.scale, age, dir)
	if _, err := bulkFill(ctx, st, small, cfg.scaleSmall, words, at); err != nil {
		return scaleSeed{}, err
	}
	took, err := bulkFill(ctx, st, big, cfg.scale, words, at)
	if err != nil {
		return scaleSeed{}, err
	}
	logf("  %d tasks in %.1f s (%.0f tasks/s)", cfg.scale, took.Seconds(), float64(cfg.scale)/took.Seconds())
	t := time.Now()
	for more := true; more; {
		if err := st.Write(ctx, store.Author{}, func(tx *store.Tx) (err error) {
			more, err = tx.IndexActivity(ctx, 10_000)
			return err
		}); err != nil {
			return scaleSeed{}, err
		}
	}
	for more := true; more; {
		if err := st.Write(ctx, store.Author{}, func(tx *store.Tx) (err error) {
			more, err = tx.IndexTaskSearch(ctx, 5000)
			return err
		}); err != nil {
			return scaleSeed{}, err
		}
	}
	logf("  the activity trail and the search index filled in %.1f s", time.Since(t).Seconds())
	seed := scaleSeed{Small: scaleSeedProject{small.id, small.token, cfg.scaleSmall}, Big: scaleSeedProject{big.id, big.token, cfg.scale}}
	db, err := sql.Open("sqlite", "file:"+agentserver.DBPath(dir)+"?mode=ro")
	if err != nil {
		return scaleSeed{}, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT (SELECT MAX(id) FROM events), (SELECT MAX(id) FROM activity)`).Scan(&seed.LastEvent, &seed.LastActivity); err != nil {
		return scaleSeed{}, err
	}
	raw, _ := json.Marshal(seed)
	return seed, os.WriteFile(filepath.Join(dir, "scale.json"), raw, 0o600)
}

// ageEvents sets the time of every event so far to at (the store's layout).
func ageEvents(ctx context.Context, dir string, at time.Time) error {
	db, err := sql.Open("sqlite", "file:"+agentserver.DBPath(dir)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE events SET at = ?`, at.UTC().Format("2006-01-02T15:04:05.000000Z"))
	return err
}

// runScaleSeed is -scale-seed DIR: the seed alone.
func runScaleSeed(ctx context.Context, cfg config) int {
	t := time.Now()
	if _, err := seedScale(ctx, cfg, cfg.scaleSeed, cfg.scaleAge); err != nil {
		logf("bench: %v", err)
		return 1
	}
	logf("seeded %s in %.1f s (its projects and tokens in scale.json)", cfg.scaleSeed, time.Since(t).Seconds())
	return 0
}

// runScalePrune is -scale-prune: the two pruning passes over a database whose every row
// has expired.
func runScalePrune(ctx context.Context, cfg config) int {
	fail := func(err error) int {
		logf("bench: %v", err)
		return 1
	}
	dir := cfg.scaleData
	var seed scaleSeed
	if dir == "" {
		tmp, done, err := dataDir(cfg, "agentdesk-bench-prune-")
		if err != nil {
			return fail(err)
		}
		defer done()
		dir = tmp
		if seed, err = seedScale(ctx, cfg, dir, 100*24*time.Hour); err != nil {
			return fail(err)
		}
	} else {
		raw, err := os.ReadFile(filepath.Join(dir, "scale.json"))
		if err == nil {
			err = json.Unmarshal(raw, &seed)
		}
		if err != nil {
			return fail(fmt.Errorf("-scale-data %s: %v (seed it with -scale-seed)", dir, err))
		}
	}
	raiseFileLimit()
	out := map[string]any{"scale_tasks": seed.Big.Tasks + seed.Small.Tasks, "cores": runtime.NumCPU()}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		out["load_average_at_start"] = strings.Join(strings.Fields(string(load))[:3], " ")
	}
	// Each pass alone: the events (activity kept for a century), then the activity.
	for _, pass := range []struct {
		name, table string
		args        []string
	}{
		{"events", "events", []string{"--activity-retention", "36500d"}},
		{"activity", "activity", nil},
	} {
		srv := &server{bin: cfg.bin, dir: dir, poll: 2 * time.Millisecond, args: pass.args}
		last := seed.LastEvent
		if pass.table == "activity" {
			last = seed.LastActivity
		}
		if err := prunePass(ctx, cfg, srv, pass.name, pass.table, last, seed, out); err != nil {
			return fail(err)
		}
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
	if cfg.jsonOut != "" {
		if err := os.WriteFile(filepath.Clean(cfg.jsonOut), append(line, '\n'), 0o644); err != nil {
			return fail(err)
		}
	}
	return 0
}

// prunePass starts the server (which prunes at start), makes creates one after another
// until no row of table up to id last (the seeded ones) is left, and reports the pass's time, the
// creates' latencies during it and after it, and the server's RSS.
func prunePass(ctx context.Context, cfg config, srv *server, name, table string, last int64, seed scaleSeed, out map[string]any) error {
	db, err := sql.Open("sqlite", "file:"+agentserver.DBPath(srv.dir)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	// Every seeded row is older than this; every row made by the run is newer.
	cutoff := time.Now().Add(-91 * 24 * time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z")
	var rows int64
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE id <= ? AND at < ?`, last, cutoff).Scan(&rows); err != nil {
		return err
	}
	logf("\n%s: %d rows, all past retention; starting the server (it prunes at start)", name, rows)

	// The creates: one at a time, 10 ms apart, each timed (a generous timeout: a create
	// behind a long write waits for it).
	client := &http.Client{Timeout: 10 * time.Minute}
	create := func() (time.Duration, error) {
		req, _ := http.NewRequest("POST", srv.url()+"/api/tasks", strings.NewReader(`{"summary":"made while pruning","steps":[{"title":"a"},{"title":"b"}]}`))
		req.Header.Set("Authorization", "Bearer "+seed.Small.Token)
		req.Header.Set("Content-Type", "application/json")
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return 0, fmt.Errorf("create: status %d", resp.StatusCode)
		}
		return time.Since(t), nil
	}
	var mu sync.Mutex
	var during []float64
	var createErr error
	stop := make(chan struct{})
	var wg sync.WaitGroup

	start := time.Now()
	if err := srv.start(ctx, cfg.synchronous); err != nil {
		return err
	}
	defer srv.stop()
	ready := time.Since(start)
	stopSampling := sampleRSS(srv)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			d, err := create()
			mu.Lock()
			if err != nil {
				createErr = errors.Join(createErr, err)
			} else {
				during = append(during, float64(d.Microseconds())/1000)
			}
			mu.Unlock()
		}
	}()
	// Done when no seeded row is left (a table emptied starts its ids at 1 again: the
	// creates' rows can hold the seeded ids, so their time tells them apart).
	for {
		var left bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE id <= ? AND at < ?)`, last, cutoff).Scan(&left); err != nil {
			return err
		}
		if !left {
			break
		}
		if time.Since(start) > 30*time.Minute {
			return fmt.Errorf("%s: not pruned in 30 minutes", name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	took := time.Since(start)
	close(stop)
	wg.Wait()
	peak := stopSampling()
	_, hwm, _ := srv.memory()
	mu.Lock()
	ms := slices.Clone(during)
	mu.Unlock()
	if createErr != nil {
		return fmt.Errorf("%s: creates during the pass: %v", name, createErr)
	}
	if len(ms) == 0 {
		return fmt.Errorf("%s: no create finished during the pass", name)
	}
	// The same creates with nothing to prune, for comparison.
	var after []float64
	for range 300 {
		time.Sleep(10 * time.Millisecond)
		d, err := create()
		if err != nil {
			return err
		}
		after = append(after, float64(d.Microseconds())/1000)
	}
	slices.Sort(ms)
	slices.Sort(after)
	out[name+"_pruned_rows"] = rows
	out[name+"_prune_s"] = round(took.Seconds(), 2)
	out[name+"_ready_ms"] = round(float64(ready.Microseconds())/1000, 1)
	out[name+"_creates_during"] = len(ms)
	out[name+"_create_during_p50_ms"] = round(percentile(ms, 0.5), 2)
	out[name+"_create_during_p99_ms"] = round(percentile(ms, 0.99), 2)
	out[name+"_create_during_max_ms"] = round(ms[len(ms)-1], 1)
	out[name+"_create_after_p50_ms"] = round(percentile(after, 0.5), 2)
	out[name+"_create_after_p99_ms"] = round(percentile(after, 0.99), 2)
	out[name+"_rss_max_mib"] = round(peak, 1)
	out[name+"_peak_rss_mib"] = round(hwm, 1)
	logf("  %d rows pruned in %.2f s from exec (ready in %.0f ms; polled every 50 ms)", rows, took.Seconds(), float64(ready.Microseconds())/1000)
	logf("  %d creates during it: p50 %.2f ms, p99 %.2f ms, max %.1f ms (after it: p50 %.2f, p99 %.2f ms)",
		len(ms), percentile(ms, 0.5), percentile(ms, 0.99), ms[len(ms)-1], percentile(after, 0.5), percentile(after, 0.99))
	logf("  RSS: at most %.1f MiB sampled during, peak %.1f MiB", peak, hwm)
	return nil
}
