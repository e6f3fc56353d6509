package store

import (
	"log/slog"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
)

// A full disk. SQLite answers SQLITE_FULL when a write to the database or its WAL
// cannot get the space it needs (write(2) failed with ENOSPC, or wrote short). That
// happens before the commit point: a transaction is committed by the WAL frame that
// carries its commit mark, written last, and the WAL index that readers go by is only
// advanced once every frame of it is written. So a SQLITE_FULL, from a statement or
// from COMMIT itself, means the transaction did not commit: SQLite rolls it back, and
// the frames it wrote are overwritten by the next transaction. Nothing of the batch was
// acknowledged, nothing of it is on disk, and the writer can go on: the batch's writes
// get 507 (errDiskFull) and later writes are tried as usual, so writes resume by
// themselves once there is space.
//
// A failed fsync is another matter (failstop.go): the data was written to the page
// cache and the kernel could not put it on disk (ENOSPC included, as with delayed
// allocation or thin provisioning); whether it is there is unknown, so the store stops.

// errDiskFull answers the writes of a batch that failed for want of space.
var errDiskFull = errs.NoSpace("the disk that holds agentdesk's database is full, so this change was not saved; " +
	"free some space on it and send the change again (agentdesk takes writes again by itself once there is room)")

// IsDiskFull reports whether err says the disk is full: SQLite's SQLITE_FULL, ENOSPC,
// or the store's answer to them.
func IsDiskFull(err error) bool {
	return sqlite.IsFull(err) || errs.CodeOf(err) == errs.InsufficientStorage
}

// noteDiskFull records that a batch failed for want of space. The log says so once an
// episode: near the limit some batches still fit between failures, and an episode ends
// only once no write has failed for want of space for diskFullQuiet.
func (s *Store) noteDiskFull(cause error) {
	s.diskFull.Store(true)
	s.lastDiskFull.Store(time.Now().UnixNano())
	if s.diskFullEpisode.CompareAndSwap(false, true) {
		slog.Error("the disk is full: writes fail with 507 Insufficient Storage until space is freed on it; "+
			"reads go on, nothing acknowledged is lost, and writes resume by themselves", "db", s.path, "err", cause)
	}
}

// diskFullQuiet is how long writes must go through before a full disk's episode ends.
const diskFullQuiet = 30 * time.Second

// noteCommitted records that a batch committed: the disk has space again.
func (s *Store) noteCommitted() {
	if s.diskFull.Load() {
		s.diskFull.Store(false)
	}
	if s.diskFullEpisode.Load() && time.Since(time.Unix(0, s.lastDiskFull.Load())) > diskFullQuiet &&
		s.diskFullEpisode.CompareAndSwap(true, false) {
		slog.Info("disk space is back: writes have gone through for 30 s", "db", s.path)
	}
}

// DiskFull reports whether the last batch failed for want of space (no batch has
// committed since): /healthz says degraded.
func (s *Store) DiskFull() bool { return s.diskFull.Load() }
