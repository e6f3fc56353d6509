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

// stopTexts are what an engine's store says once it has stopped: the log line, the
// answer to the writes whose outcome is unknown, and to every write after.
type stopTexts struct {
	log                     string
	unknownOutcome, stopped error
}

// errUnknownOutcome answers the writes of the batch whose commit or fsync failed.
var errUnknownOutcome = errs.Unavailable("this write could not be made durable (the disk failed to flush it), so it may or " +
	"may not be stored; the server has stopped accepting writes until its operator restarts it: do not retry " +
	"against this server, and check after the restart whether the write is there")

var sqliteStopTexts = stopTexts{
	log: "the database writer has stopped: a commit or fsync failed, so whether the last writes are on disk is " +
		"unknown; no further write is accepted and /healthz answers 503; check the disk (space, I/O errors) and restart agentdesk",
	unknownOutcome: errUnknownOutcome,
	stopped: errs.Unavailable("the server has stopped accepting writes after a failed flush to disk; " +
		"its operator must check the disk and restart it (the server log says why)"),
}

// On PostgreSQL the store stops only when a COMMIT failed and the database could not
// be asked what became of it (postgres.Outcome).
var postgresStopTexts = stopTexts{
	log: "the database writer has stopped: a COMMIT failed and the database could not be asked whether it committed; " +
		"no further write is accepted and /healthz answers 503; check the database and restart agentdesk",
	unknownOutcome: errs.Unavailable("the connection to the database was lost as this write was committed, and " +
		"the database could not be asked whether it was, so it may or may not be stored; the server has stopped accepting " +
		"writes until its operator restarts it: do not retry against this server, and check after the restart whether the write is there"),
	stopped: errs.Unavailable("the server has stopped accepting writes after it lost the database in the middle of " +
		"a commit; its operator must check the database and restart it (the server log says why)"),
}

// failStop makes the store refuse writes from now on, logging the cause once.
func (s *Store) failStop(cause error) {
	if s.stopped.CompareAndSwap(false, true) {
		slog.Error(s.stopTexts.log, "db", s.path, "err", cause)
	}
}

// unknownOutcome answers the writes of the batch that made the store stop.
func (s *Store) unknownOutcome() error { return s.stopTexts.unknownOutcome }

// Stopped is the reason writes are refused, nil while the store takes writes.
func (s *Store) Stopped() error {
	if !s.stopped.Load() {
		return nil
	}
	return s.stopTexts.stopped
}
