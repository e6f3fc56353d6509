package store

import (
	"context"
	"database/sql"
	"sync"
)

// foreignWatch notices commits made by other connections than this store's writer: the
// CLI beside a running server, or a second store on the same file. The token cache is
// emptied by this store's own writes as they commit (credcache.go); another process's
// writes must empty it too, or a token revoked through the CLI would go on working in
// the server.
//
// PRAGMA data_version, read on a connection of its own (the watcher), changes whenever
// any other connection commits, this store's writer included. known is its value just
// after this store's last commit, so a different value means someone else committed.
// The writer keeps known exact (commit): it reads the watcher before and after its
// COMMIT; a foreign commit slipping in between its COMMIT and that second read shows in
// the writer connection's own data_version, which moves only for other connections'
// commits. So this store's own writes seldom empty the cache whole.
type foreignWatch struct {
	mu     sync.Mutex
	db     *sql.DB // one connection, kept open: data_version is per connection
	stmt   *sql.Stmt
	known  int64
	forget func() // empties the token cache
}

func openForeignWatch(path, synchronous string, forget func()) (*foreignWatch, error) {
	db, err := sql.Open("sqlite", dsn(path, false, synchronous, true))
	if err != nil {
		return nil, err
	}
	keepOneConnection(db)
	w := &foreignWatch{db: db, forget: forget}
	if w.stmt, err = db.Prepare("PRAGMA data_version"); err == nil {
		w.known, err = w.version(context.Background())
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

func (w *foreignWatch) version(ctx context.Context) (int64, error) {
	var v int64
	err := w.stmt.QueryRowContext(ctx).Scan(&v)
	return v, err
}

// check empties the token cache if another process committed since it last looked;
// called before a cache is read. A failed look counts as a change (forgetting is safe).
func (w *foreignWatch) check(ctx context.Context) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkLocked(ctx)
}

func (w *foreignWatch) checkLocked(ctx context.Context) {
	v, err := w.version(ctx)
	if err != nil || v != w.known {
		w.forget()
	}
	if err == nil {
		w.known = v
	}
}

// commit commits the writer's transaction tx. writerVersion is the writer connection's
// data_version read inside tx: no other connection can commit while tx holds the write
// lock, so a different value after the commit is a foreign commit that came after it.
//
// The COMMIT itself runs without mu, so that a request's check (every token lookup)
// never waits for it; a check between the COMMIT and the look after it takes this
// commit for a foreign one and empties the cache, which is safe.
func (w *foreignWatch) commit(ctx context.Context, tx *sql.Tx, writer *sql.DB, writerVersion int64) error {
	w.check(ctx) // foreign commits before tx began
	if err := tx.Commit(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
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
	}
	return nil
}

func (w *foreignWatch) close() error {
	w.stmt.Close()
	return w.db.Close()
}
