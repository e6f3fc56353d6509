package store

import (
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Durability without holding up the writer.
//
// With synchronous=FULL SQLite fsyncs the WAL inside every commit, and the single
// writer waits for the disk (about a millisecond here) before it can start the next
// batch. Instead agentdesk runs SQLite with synchronous=NORMAL, which writes the
// committed WAL frames to the operating system without an fsync, and fsyncs the WAL
// itself in a second goroutine (the syncer) before any write of the batch is
// acknowledged or its events are published. While the syncer waits for the disk, the
// writer already runs and commits the next batch; one fsync then covers every batch
// committed meanwhile. The guarantee is FULL's: a write is acknowledged only once its
// WAL frames are on stable storage, in commit order.
//
// One difference: other requests can read a batch during its fsync (about a
// millisecond) before its writers are told it succeeded; event reads cannot (see
// eventHorizon). A power cut in that window loses the batch, which no writer was told
// had succeeded and the stream never sent.
// A later write that depends on what it read is acknowledged only after its own fsync,
// which covers the earlier batch too.

// committed is a batch whose transaction committed and waits for the fsync.
type committed struct {
	batch   []*job
	results []error
	events  []model.Event
}

// syncLoop acknowledges committed batches in commit order, after one fsync for all
// those that are waiting (when the store runs FULL).
func (s *sqliteEngine) syncLoop() {
	defer close(s.writerEnd)
	var pending []committed
	for {
		// Ready for more: the writer commits its batch now rather than let it grow.
		select {
		case s.syncReady <- struct{}{}:
		default:
		}
		c, ok := <-s.committed
		if !ok {
			return
		}
		pending = append(pending[:0], c)
	drain:
		for {
			select {
			case c, ok := <-s.committed:
				if !ok {
					break drain
				}
				pending = append(pending, c)
			default:
				break drain
			}
		}
		var syncErr error
		if hook := s.beforeSync.Load(); hook != nil {
			var events []model.Event
			for _, c := range pending {
				events = append(events, c.events...)
			}
			syncErr = (*hook)(events)
		}
		if s.opts.Synchronous == "FULL" && syncErr == nil {
			start := time.Now()
			syncErr = s.wal.Sync()
			s.syncNanos.Add(int64(time.Since(start)))
			s.syncs.Add(1)
		}
		if syncErr != nil {
			s.failStop(fmt.Errorf("fsync of the WAL: %w", syncErr))
		}
		// Once stopped, no batch is acknowledged, even if this fsync succeeded: it says
		// nothing of the pages an earlier failed one may have lost (failstop.go).
		stopped := s.stopped.Load()
		for _, c := range pending {
			if !stopped {
				s.horizon.durable(c.events)
				if len(c.events) > 0 && s.opts.OnCommit != nil {
					s.opts.OnCommit(c.events)
				}
			}
			for i, j := range c.batch {
				switch {
				case c.results[i] != nil:
					j.done <- c.results[i]
				case stopped:
					j.done <- errUnknownOutcome
				default:
					j.done <- nil
				}
			}
		}
	}
}

// eventHorizon keeps the read pool's event reads (the stream, ?since= replay) from
// showing an event before the fsync that makes it durable: while this store has
// committed events of a project that are not yet synced, event reads stop at the last
// synced one. Events written by another process (the command line) come after, and are
// held back only while such a sync is under way.
type eventHorizon struct {
	mu        sync.Mutex
	committed map[string]int64 // project -> last seq this store's writer committed
	synced    map[string]int64 // project -> last seq the syncer made durable
}

// limit is the last seq of the project that event reads may show, if they must stop.
func (h *eventHorizon) limit(projectID string) (last int64, capped bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.synced[projectID], h.committed[projectID] > h.synced[projectID]
}

// committing records the batch's last seqs before its commit (a read in between only
// sees less), and returns what to restore if the commit fails.
func (h *eventHorizon) committing(seqs map[string]int64) (restore map[string]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.committed == nil {
		h.committed, h.synced = map[string]int64{}, map[string]int64{}
	}
	restore = make(map[string]int64, len(seqs))
	for p, seq := range seqs {
		restore[p] = h.committed[p]
		h.committed[p] = max(h.committed[p], seq)
	}
	return restore
}

func (h *eventHorizon) restore(prev map[string]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	maps.Copy(h.committed, prev)
}

// durable records events made durable (in order).
func (h *eventHorizon) durable(events []model.Event) {
	if len(events) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range events {
		h.synced[e.ProjectID] = max(h.synced[e.ProjectID], e.Seq)
	}
}
