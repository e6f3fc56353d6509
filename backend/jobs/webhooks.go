package jobs

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/service"
)

// webhookPoll is how often the deliverer looks for work with no wake-up: events written
// by another process (the command line) reach no OnCommit of this one.
const webhookPoll = time.Second

// MaxProjectWebhookDeliveries bounds how many webhooks of one project are sent to at
// once (the contract): one project's slow receivers leave room for the others'.
const MaxProjectWebhookDeliveries = 4

// webhooks drives the webhooks' deliveries. Each webhook with events to send gets a
// goroutine that sends them in seq order, one request at a time, until one fails or
// none is left; at most MaxWebhookDeliveries run at once, at most
// MaxProjectWebhookDeliveries of one project, and a free place goes to the project with
// the fewest running (fairly). Nothing here waits for a receiver: a slow one holds only
// its own goroutine, never the writer or the stream.
// It wakes on commits, on a redelivery, every webhookPoll, and when the earliest retry
// is due by the Clock.
func (r *Runner) webhooks(ctx context.Context) {
	defer r.wg.Done()
	clock := r.opts.Clock
	var senders sync.WaitGroup
	defer senders.Wait()
	running := map[int64]string{} // webhook id -> its project
	perProject := map[string]int{}
	// again: webhooks that were running when a wake-up came; they are looked at again
	// when they finish. full: some were left out for the limits.
	again := map[int64]bool{}
	full := false
	done := make(chan int64)
	poll := time.NewTicker(webhookPoll)
	defer poll.Stop()
	var retry Timer
	// setRetry sets the timer for the earliest retry (a failed attempt sets one).
	setRetry := func() {
		if retry != nil {
			retry.Stop()
		}
		wait := r.opts.MaxSleep
		if next, ok, err := r.svc.NextWebhookAttempt(ctx); err == nil && ok {
			wait = min(wait, max(next.Sub(clock.Now()), 0))
		}
		retry = clock.NewTimer(wait)
	}
	send := func(w service.DueWebhook) {
		running[w.ID] = w.ProjectID
		perProject[w.ProjectID]++
		senders.Add(1)
		go func() {
			defer senders.Done()
			r.sendWebhook(ctx, w.ID)
			select {
			case done <- w.ID:
			case <-ctx.Done():
			}
		}()
	}
	look := true
	for {
		if look {
			look = false
			due, err := r.svc.DueWebhooks(ctx)
			if err != nil && ctx.Err() == nil {
				slog.Warn("webhooks: list due", "err", err)
			}
			var waiting []service.DueWebhook
			for _, w := range due {
				if _, ok := running[w.ID]; ok {
					again[w.ID] = true
				} else {
					waiting = append(waiting, w)
				}
			}
			for len(running) < r.opts.MaxWebhookDeliveries {
				i := nextFairly(waiting, perProject)
				if i < 0 {
					break
				}
				send(waiting[i])
				waiting = slices.Delete(waiting, i, i+1)
			}
			full = len(waiting) > 0
			setRetry()
		}
		select {
		case <-ctx.Done():
			retry.Stop()
			return
		case id := <-done:
			project := running[id]
			delete(running, id)
			perProject[project]--
			if perProject[project] == 0 {
				delete(perProject, project)
			}
			look = again[id] || full
			delete(again, id)
			if !look {
				setRetry()
			}
		case <-r.opts.Commits:
			look = r.svc.WebhooksEnabled(ctx) // no query per commit while there are none
		case <-r.svc.WebhooksChanged():
			look = true
		case <-poll.C:
			look = r.svc.CountWebhooks(ctx) != 0
		case <-retry.C():
			look = true
		}
	}
}

// nextFairly picks the waiting webhook to send to next: the first of the project with
// the fewest deliveries running, among those below MaxProjectWebhookDeliveries; -1 when
// none may start.
func nextFairly(waiting []service.DueWebhook, perProject map[string]int) int {
	best := -1
	for i, w := range waiting {
		n := perProject[w.ProjectID]
		if n < MaxProjectWebhookDeliveries && (best < 0 || n < perProject[waiting[best].ProjectID]) {
			best = i
		}
	}
	return best
}

// sendWebhook sends the webhook its events until one fails or none is left.
func (r *Runner) sendWebhook(ctx context.Context, id int64) {
	for {
		more, err := r.svc.DeliverWebhook(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				slog.Warn("webhooks: deliver", "webhook", id, "err", err)
			}
			return
		}
		if !more {
			return
		}
	}
}
