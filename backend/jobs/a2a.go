package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentdesk/agentdesk/backend/a2a"
	"github.com/agentdesk/agentdesk/backend/service"
)

// a2aPoll is how often the A2A senders look for work without a wake-up (a retry come
// due, another process's write).
const a2aPoll = time.Second

// MaxA2ASends bounds how many remote tasks, and how many push configs, are sent to at
// once (each).
const MaxA2ASends = 16

// remoteAgents sends the tasks of remote A2A agents (backend/a2a.RunRemoteTask), one
// attempt a time per task. Nothing here holds a write: an assignment only queues the
// request.
func (r *Runner) remoteAgents(ctx context.Context) {
	defer r.wg.Done()
	drive(ctx, r.svc.DueRemoteTasks, r.svc.RemoteTasksChanged(), func(ctx context.Context, d service.DueRemoteTask) {
		if err := a2a.RunRemoteTask(ctx, r.svc, d.ProjectID, d.TaskID); err != nil && ctx.Err() == nil {
			slog.Warn("a2a: remote task", "task", d.TaskID, "err", err)
		}
	})
}

// a2aPushes delivers the A2A push notification configs' notifications, each config's
// in order, one request at a time, until one fails or none is left.
func (r *Runner) a2aPushes(ctx context.Context) {
	defer r.wg.Done()
	drive(ctx, r.svc.DuePushConfigs, nil, func(ctx context.Context, id int64) {
		for {
			more, err := r.svc.DeliverA2APush(ctx, id, a2a.PushBody)
			if err != nil && ctx.Err() == nil {
				slog.Warn("a2a: push notification", "config", id, "err", err)
			}
			if err != nil || !more {
				return
			}
		}
	})
}

// drive runs work on each item that due lists, in a goroutine of its own, at most
// MaxA2ASends at once and one at a time per item; it looks again on a wake-up and every
// a2aPoll (not as soon as one ends: an item failing at once would spin), until ctx ends
// (then it waits for those running).
func drive[T comparable](ctx context.Context, due func(context.Context) ([]T, error), wake <-chan struct{}, work func(context.Context, T)) {
	running := map[T]bool{}
	done := make(chan T)
	poll := time.NewTicker(a2aPoll)
	defer poll.Stop()
	defer func() {
		for len(running) > 0 {
			delete(running, <-done)
		}
	}()
	look := true
	for {
		var list []T
		if look {
			var err error
			if list, err = due(ctx); err != nil && ctx.Err() == nil {
				slog.Warn("a2a: list due work", "err", err)
			}
		}
		look = true
		for _, item := range list {
			if running[item] || len(running) >= MaxA2ASends {
				continue
			}
			running[item] = true
			go func() {
				work(ctx, item)
				done <- item
			}()
		}
		select {
		case <-ctx.Done():
			return
		case item := <-done:
			delete(running, item)
			look = false
		case <-wake:
		case <-poll.C:
		}
	}
}
