package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps one prepared statement per query text of a pool. modernc's driver
// prepares every statement anew otherwise, which costs more than running most of ours.
// Queries built at run time (a steps insert for N steps) make a few variants each; the
// cache stops growing at maxCachedStmts and simply prepares the rest each time.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

const maxCachedStmts = 512

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.RLock()
	st := c.m[query]
	c.mu.RUnlock()
	if st != nil {
		return st, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st = c.m[query]; st != nil {
		return st, nil
	}
	if len(c.m) >= maxCachedStmts {
		return nil, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// batchStmts caches statements prepared on one write transaction. The writer pool has
// a single connection, held by the transaction, so statements cannot be prepared on the
// pool mid-write; they live as long as the batch, whose writes share them.
type batchStmts struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func (b *batchStmts) get(ctx context.Context, query string) *sql.Stmt {
	if st := b.m[query]; st != nil {
		return st
	}
	if len(b.m) >= maxCachedStmts {
		return nil
	}
	st, err := b.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	b.m[query] = st
	return st
}

// stmt returns a prepared statement for query, or nil when the query should just be
// run directly (the direct call then reports any error in the query itself).
func (r Reader) stmt(ctx context.Context, query string) *sql.Stmt {
	if r.batch != nil {
		return r.batch.get(ctx, query)
	}
	if r.cache == nil {
		return nil
	}
	st, err := r.cache.get(ctx, query)
	if err != nil {
		return nil
	}
	return st
}

func (r Reader) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := r.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return r.q.ExecContext(ctx, query, args...)
}

func (r Reader) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.q.QueryContext(ctx, query, args...)
}

func (r Reader) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.q.QueryRowContext(ctx, query, args...)
}
