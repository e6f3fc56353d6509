package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentdesk/agentdesk/backend/a2a"
)

// remotePoll is how often the sender to remote A2A agents looks for work without a
// wake-up (a retry come due, another process's write).
const remotePoll = time.Second

// MaxRemoteAttempts bounds how many remote tasks are worked on at once.
const MaxRemoteAttempts = 16

// remoteAgents sends the tasks of remote A2A agents (backend/a2a.RunRemoteTask): each
// due task gets a goroutine for one attempt, at most MaxRemoteAttempts at once, one at
// a time per task. Nothing here holds a write: an assignment only queues the request.
func (r *Runner) remoteAgents(ctx context.Context) {
	defer r.wg.Done()
	running := map[int64]bool{}
	done := make(chan int64)
	poll := time.NewTicker(remotePoll)
	defer poll.Stop()
	defer func() {
		for len(running) > 0 { // let the attempts under way end (ctx is done)
			delete(running, <-done)
		}
	}()
	for {
		due, err := r.svc.DueRemoteTasks(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Warn("a2a: list due remote tasks", "err", err)
		}
		for _, d := range due {
			if running[d.TaskID] || len(running) >= MaxRemoteAttempts {
				continue
			}
			running[d.TaskID] = true
			go func() {
				if err := a2a.RunRemoteTask(ctx, r.svc, d.ProjectID, d.TaskID); err != nil && ctx.Err() == nil {
					slog.Warn("a2a: remote task", "task", d.TaskID, "err", err)
				}
				done <- d.TaskID
			}()
		}
		select {
		case <-ctx.Done():
			return
		case id := <-done:
			delete(running, id)
		case <-r.svc.RemoteTasksChanged():
		case <-poll.C:
		}
	}
}
