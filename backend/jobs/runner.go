package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Options tune the Runner; the zero value is what agentdesk runs with.
type Options struct {
	Clock Clock // default RealClock
	// ActivityRetention is how long activity is kept (default 90 days).
	ActivityRetention time.Duration
	// PruneEvery is how often old activity is pruned (default hourly).
	PruneEvery time.Duration
	// IndexEvery is how often the activity trail is filled from the event log (default
	// every second; reads of the trail fill it first anyway).
	IndexEvery time.Duration
	// MaxSleep bounds how long the scheduler sleeps without looking at the jobs again
	// (default one hour): a safety net should a wake-up be lost.
	MaxSleep time.Duration
	// Commits receives a value after events are committed (the store's OnCommit), to
	// wake the webhook deliverer; nil: it looks every second.
	Commits <-chan struct{}
	// MaxWebhookDeliveries bounds how many webhooks are sent to at once (default 8), at
	// most MaxProjectWebhookDeliveries of one project; each webhook has at most one
	// request in flight.
	MaxWebhookDeliveries int
	// Foreign receives a value when another server sharing the PostgreSQL database
	// committed (store.Options.OnForeign): the scheduler looks at the jobs again, at most
	// every HeldRetry. (Such commits should wake the webhook deliverer too, by Commits.)
	// Nil on SQLite.
	Foreign <-chan struct{}
	// Mail, if set, sends an email to the people each question asks (mail.go).
	Mail *Mail
	// OnRun, if set, is told of each pass of the periodic work (what it is, and its
	// error or nil): the metrics count them (backend/metrics).
	OnRun func(what string, err error)
}

// The periods of the work that runs on real time, whatever the Clock.
const (
	// FlushTokenUseEvery is how often the tokens' last use is written.
	FlushTokenUseEvery = 10 * time.Second
	// PruneLogsEvery is how often old events and Idempotency-Keys are forgotten (also
	// once at start).
	PruneLogsEvery = time.Hour
)

// Runner is the server's background work: the scheduler, the activity's filling and
// pruning, the tokens' last use, the webhooks' deliveries, and the pruning of old
// events, Idempotency-Keys and webhook deliveries.
// The service and the hub offer each as a one-shot operation; the Runner says when.
type Runner struct {
	svc    *service.Service
	hub    *events.Hub
	opts   Options
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start starts the background work. Runs due while the server was not running are
// handled at once, by each job's catch-up policy.
func Start(svc *service.Service, hub *events.Hub, opts Options) *Runner {
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.ActivityRetention <= 0 {
		opts.ActivityRetention = service.DefaultActivityRetention
	}
	if opts.PruneEvery <= 0 {
		opts.PruneEvery = time.Hour
	}
	if opts.MaxSleep <= 0 {
		opts.MaxSleep = time.Hour
	}
	if opts.IndexEvery <= 0 {
		opts.IndexEvery = time.Second
	}
	if opts.MaxWebhookDeliveries <= 0 {
		opts.MaxWebhookDeliveries = 8
	}
	ctx, cancel := context.WithCancel(audit.WithVia(context.Background(), audit.ViaJob))
	r := &Runner{svc: svc, hub: hub, opts: opts, cancel: cancel}
	started := opts.Clock.Now()
	r.wg.Add(13)
	go r.schedule(ctx, started)
	go r.prune(ctx)
	// The activity trail keeps up with writes, whatever the scheduler's clock (reads of
	// the trail fill it first anyway).
	go r.every(ctx, opts.IndexEvery, false, "fill the activity trail", svc.IndexActivity)
	// And the task search index (searches index what is pending first anyway).
	go r.every(ctx, opts.IndexEvery, false, "index tasks for search", svc.IndexTaskSearch)
	go r.every(ctx, FlushTokenUseEvery, false, "record token use", func(ctx context.Context) error {
		// Once taken, the last-use times must be written: a cancelled ctx could keep the
		// write from being submitted (store.Write).
		return svc.FlushTokenUse(context.WithoutCancel(ctx))
	})
	go r.every(ctx, PruneLogsEvery, true, "prune events", hub.PruneEvents)
	go r.every(ctx, PruneLogsEvery, true, "prune idempotency keys", svc.PruneIdempotencyKeys)
	go r.every(ctx, PruneLogsEvery, true, "prune ended sessions", svc.PruneSessions)
	go r.every(ctx, PruneLogsEvery, true, "prune webhook deliveries", svc.PruneWebhookDeliveries)
	// Questions' deadlines, on time within a second, whichever server gets there first
	// (service.ExpireQuestions fires each once); at start too, for those that came while
	// no server ran.
	go r.every(ctx, time.Second, true, "expire questions", svc.ExpireQuestions)
	go r.webhooks(ctx)     // webhooks.go
	go r.remoteAgents(ctx) // a2a.go
	go r.a2aPushes(ctx)    // a2a.go
	if opts.Mail != nil {
		r.wg.Add(2)
		go r.mail(ctx) // mail.go
		go r.every(ctx, PruneLogsEvery, true, "prune sent mail", svc.PruneMail)
	}
	return r
}

// every runs fn every period of real time (and once at start if atStart) until r stops,
// logging its failures as what.
func (r *Runner) every(ctx context.Context, period time.Duration, atStart bool, what string, fn func(context.Context) error) {
	defer r.wg.Done()
	run := func() {
		err := fn(ctx)
		if ctx.Err() != nil {
			return // stopping: not a run
		}
		if r.opts.OnRun != nil {
			r.opts.OnRun(what, err)
		}
		if err != nil && !quiet(err) {
			slog.Warn(what, "err", err)
		}
	}
	if atStart {
		run()
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		run()
	}
}

// Stop ends the background work and waits for it: a run in progress finishes its
// transaction first.
func (r *Runner) Stop() {
	r.cancel()
	r.wg.Wait()
}

// RetryAfter is how long the scheduler waits after a pass that failed (the database
// refusing writes, say) before it tries the jobs still due again, rather than at once.
const RetryAfter = time.Minute

// The scheduler and the wall clock. Timers run on the monotonic clock, so setting the
// system clock neither fires nor delays them; the scheduler reads the wall clock when
// it wakes (at the latest every MaxSleep) and runs what is due by then, once: each run
// moves the job's next run past now. Set back an hour, the clock goes through times it
// has run already: the jobs' next runs are still ahead, so nothing fires twice. Set
// forward, the runs jumped over are missed (see RunDueJobs: the catch-up policy).
//
// since is the earliest wall time the scheduler has seen while running: a run due
// before it was missed while agentdesk was not running. It starts as the start time
// and moves back with the clock, so that a job created after the clock was set back
// runs on time in the repeated hour rather than being taken for one missed.
func (r *Runner) schedule(ctx context.Context, started time.Time) {
	defer r.wg.Done()
	clock := r.opts.Clock
	since := started
	passOK, held := r.runDue(ctx, &since)
	// Another server's commits wake the scheduler at most every HeldRetry (real time):
	// under load they come hundreds of times a second.
	var foreignQuiet <-chan time.Time
	for {
		wait := r.opts.MaxSleep
		now := clock.Now()
		if now.Before(since) {
			since = now
		}
		next, ok, err := r.svc.NextJobRun(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			slog.Error("scheduler: read the next run", "err", err)
			wait = RetryAfter
		} else if ok {
			wait = min(wait, max(next.Sub(now), 0))
		}
		if !passOK {
			// The jobs that failed are still due: without a pause the loop would spin.
			wait = max(wait, RetryAfter)
		} else if held {
			// Another server is running a due job: it stays due until that server
			// commits (whose notification wakes this loop), so do not spin meanwhile.
			wait = max(wait, HeldRetry)
		}
		foreign := r.opts.Foreign
		if foreignQuiet != nil {
			foreign = nil
		}
		t := clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.svc.JobsChanged():
			t.Stop()
			passOK, held = true, false // a change may have fixed it: look again at once
			continue
		case <-foreign:
			t.Stop()
			foreignQuiet = time.After(HeldRetry)
			held = false // its holder may have committed: look again at once
			continue
		case <-foreignQuiet:
			t.Stop()
			foreignQuiet = nil
			continue
		case <-t.C():
		}
		passOK, held = r.runDue(ctx, &since)
	}
}

// HeldRetry is how long the scheduler waits before it looks again at a due job that
// another server sharing the database was running (unless that server's commit wakes it
// first), and the least time between two looks that other servers' commits cause.
const HeldRetry = time.Second

// runDue runs the jobs due now, taking runs due before since as missed; ok is false if
// any failed, held is true if another server was running some.
func (r *Runner) runDue(ctx context.Context, since *time.Time) (ok, held bool) {
	now := r.opts.Clock.Now()
	if now.Before(*since) {
		*since = now
	}
	n, err := r.svc.RunDueJobsHeld(ctx, now, *since)
	if err != nil && ctx.Err() == nil && !quiet(err) {
		slog.Error("scheduler: run due jobs; trying again later", "err", err, "retry_after", RetryAfter)
	}
	return err == nil, n > 0
}

func (r *Runner) prune(ctx context.Context) {
	defer r.wg.Done()
	clock := r.opts.Clock
	for {
		// The next pass is timed from this one's start, so the timer is set at a known
		// time however long the pass takes (tests wait on the scheduler's timers).
		t := clock.NewTimer(r.opts.PruneEvery)
		before := clock.Now().Add(-r.opts.ActivityRetention)
		if n, err := r.svc.PruneActivity(ctx, before); err != nil && ctx.Err() == nil && !quiet(err) {
			slog.Warn("prune activity", "err", err)
		} else if n > 0 {
			slog.Info("pruned activity", "entries", n, "before", before.UTC().Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// quiet tells the failures the store has logged already, once for all: a full disk
// (store/diskfull.go) would otherwise be logged by every pass of every background job.
func quiet(err error) bool { return store.IsDiskFull(err) }
