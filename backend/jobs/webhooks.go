package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// webhookPoll is how often the deliverer looks for work with no wake-up: events written
// by another process (the command line) reach no OnCommit of this one.
const webhookPoll = time.Second

// webhooks drives the webhooks' deliveries. Each webhook with events to send gets a
// goroutine that sends them in seq order, one request at a time, until one fails or
// none is left; at most MaxWebhookDeliveries run at once. Nothing here waits for a
// receiver: a slow one holds only its own goroutine, never the writer or the stream.
// It wakes on commits, on a redelivery, every webhookPoll, and when the earliest retry
// is due by the Clock.
func (r *Runner) webhooks(ctx context.Context) {
	defer r.wg.Done()
	clock := r.opts.Clock
	var senders sync.WaitGroup
	defer senders.Wait()
	running := map[int64]bool{}
	// again: webhooks that were running when a wake-up came; they are looked at again
	// when they finish. full: some were left out for the limit.
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
	look := true
	for {
		if look {
			look, full = false, false
			due, err := r.svc.DueWebhooks(ctx)
			if err != nil && ctx.Err() == nil {
				slog.Warn("webhooks: list due", "err", err)
			}
			for _, id := range due {
				switch {
				case running[id]:
					again[id] = true
				case len(running) >= r.opts.MaxWebhookDeliveries:
					full = true
				default:
					running[id] = true
					senders.Add(1)
					go func() {
						defer senders.Done()
						r.sendWebhook(ctx, id)
						select {
						case done <- id:
						case <-ctx.Done():
						}
					}()
				}
			}
			setRetry()
		}
		select {
		case <-ctx.Done():
			retry.Stop()
			return
		case id := <-done:
			delete(running, id)
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
