package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// Watch notices commits made by other connections than this store's writer: the
// CLI beside a running server, or a second store on the same file. The read caches (the
// credentials, the task lists' JSON) are emptied by this store's own writes as they
// commit; another process's writes must empty them too, or a token revoked through the
// CLI would go on working in the server.
//
// PRAGMA data_version, read on a connection of its own (the watcher), changes whenever
// any other connection commits, this store's writer included. known is its value just
// after this store's last commit, so a different value means someone else committed.
// The writer keeps known exact (commit): it holds mu across its COMMIT and reads the
// watcher before and after; a foreign commit slipping in between its COMMIT and that
// second read shows in the writer connection's own data_version, which moves only for
// other connections' commits. So this store's own writes never empty the caches whole.
type Watch struct {
	mu     sync.Mutex
	db     *sql.DB // one connection, kept open: data_version is per connection
	stmt   *sql.Stmt
	known  int64
	forget func() // empties every read cache
	// When the last look that found known exact began (monotonic()): every other
	// process's commit before it has emptied the caches (checkRecent).
	looked atomic.Int64
}

// OpenWatch opens the watch of the database at path; forget empties the caches.
func OpenWatch(path, synchronous string, forget func()) (*Watch, error) {
	db, err := sql.Open("sqlite", DSN(path, false, synchronous, true))
	if err != nil {
		return nil, err
	}
	KeepOneConnection(db)
	w := &Watch{db: db, forget: forget}
	if w.stmt, err = db.Prepare("PRAGMA data_version"); err == nil {
		start := monotonic()
		if w.known, err = w.version(context.Background()); err == nil {
			w.looked.Store(start)
		}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

func (w *Watch) version(ctx context.Context) (int64, error) {
	var v int64
	err := w.stmt.QueryRowContext(ctx).Scan(&v)
	return v, err
}

// Check empties the read caches if another process committed since it last looked;
// called before a cache is read. A failed look counts as a change (forgetting is safe).
func (w *Watch) Check(ctx context.Context) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkLocked(ctx)
}

// CheckRecent is Check, unless a look began less than within ago: a cache that uses it
// notices another process's commit up to within late (the token cache's writers wait
// that long before answering a token change: credcache.go). Under load the writer's
// commits look often enough that a request seldom looks itself.
func (w *Watch) CheckRecent(ctx context.Context, within time.Duration) {
	if w == nil || monotonic()-w.looked.Load() < int64(within) {
		return
	}
	w.Check(ctx)
}

// monotonic is the time since the process began, in nanoseconds, on the monotonic clock.
func monotonic() int64 { return int64(time.Since(processStart)) }

var processStart = time.Now()

func (w *Watch) checkLocked(ctx context.Context) {
	start := monotonic()
	v, err := w.version(ctx)
	if err != nil || v != w.known {
		w.forget()
	}
	if err == nil {
		w.known = v
		w.looked.Store(start)
	}
}

// Commit commits the writer's transaction tx. writerVersion is the writer connection's
// data_version read inside tx: no other connection can commit while tx holds the write
// lock, so a different value after the commit is a foreign commit that came after it.
func (w *Watch) Commit(ctx context.Context, tx *sql.Tx, writer *sql.DB, writerVersion int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkLocked(ctx) // foreign commits before tx began
	if err := tx.Commit(); err != nil {
		return err
	}
	start := monotonic()
	v, err := w.version(ctx)
	var after int64
	if err == nil {
		err = writer.QueryRowContext(ctx, "PRAGMA data_version").Scan(&after)
	}
	if err != nil || after != writerVersion {
		w.forget()
	}
	if err == nil {
		w.known = v
		w.looked.Store(start)
	}
	return nil
}

func (w *Watch) Close() error {
	w.stmt.Close()
	return w.db.Close()
}
