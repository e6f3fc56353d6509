package store

import (
	"log/slog"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// Fail-stop. When a commit or the fsync after it fails, whether the writes since the
// last good fsync are on disk is unknown; a later fsync that succeeds proves nothing
// about them (the lesson of PostgreSQL's fsync bug: the kernel may have dropped the
// dirty pages and cleared the error). So the store stops: the writes of that batch are
// told their outcome is unknown (not that they failed, which would invite a retry that
// duplicates them), their events are not published, every later write is refused,
// Ping fails (so /healthz answers 503), and the log says why. A restart, once the disk
// is fixed, starts over from what SQLite finds on disk.

// errUnknownOutcome answers the writes of the batch whose commit or fsync failed.
var errUnknownOutcome = errs.Unavailable("this write could not be made durable (the disk failed to flush it), so it may or " +
	"may not be stored; the server has stopped accepting writes until its operator restarts it: do not retry " +
	"against this server, and check after the restart whether the write is there")

// errStopped answers every write after the failure, and /healthz.
var errStopped = errs.Unavailable("the server has stopped accepting writes after a failed flush to disk; " +
	"its operator must check the disk and restart it (the server log says why)")

// failStop makes the store refuse writes from now on, logging the cause once.
func (s *Store) failStop(cause error) {
	if s.stopped.CompareAndSwap(false, true) {
		slog.Error("the database writer has stopped: a commit or fsync failed, so whether the last writes are on disk is "+
			"unknown; no further write is accepted and /healthz answers 503; check the disk (space, I/O errors) and restart agentdesk",
			"db", s.path, "err", cause)
	}
}

// Stopped is the reason writes are refused, nil while the store takes writes.
func (s *Store) Stopped() error {
	if s.stopped.Load() {
		return errStopped
	}
	return nil
}
