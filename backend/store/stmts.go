package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
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

// lookup returns the cached statement of query, nil if it has none.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.m[query]; st != nil {
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

// batchStmts gives the statements of one write batch. The writer pool has a single
// connection, held by the transaction, so a statement the pool has not prepared yet
// cannot be prepared on it mid-write: the batch prepares it on the transaction and
// notes it in missing, and once the batch has committed the writer prepares the missing
// ones on the pool (preparePending), where later batches find them.
type batchStmts struct {
	tx      *sql.Tx
	pool    *stmtCache
	m       map[string]*sql.Stmt
	missing []string
}

func (b *batchStmts) get(ctx context.Context, query string) *sql.Stmt {
	if st := b.m[query]; st != nil {
		return st
	}
	var st *sql.Stmt
	if pooled := b.pool.lookup(query); pooled != nil {
		st = b.tx.StmtContext(ctx, pooled) // reuses the driver statement of the connection
	} else {
		if len(b.m) >= maxCachedStmts {
			return nil
		}
		var err error
		if st, err = b.tx.PrepareContext(ctx, query); err != nil {
			return nil
		}
		b.missing = append(b.missing, query)
	}
	b.m[query] = st
	return st
}

// preparePending prepares on the pool the statements the batch lacked; call it once
// the batch's transaction has ended and the connection is free.
func (b *batchStmts) preparePending(ctx context.Context) {
	for _, q := range b.missing {
		_, _ = b.pool.get(ctx, q) // a query that fails to prepare keeps running directly
	}
}

// On PostgreSQL the statements are not prepared here: pgx prepares and caches each
// statement text per connection by itself (its default QueryExecModeCacheStatement).

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

// statementContext is the context a statement runs with. Inside a write it cannot be
// cancelled: the writer checked the request's context before starting the write, and
// from then on the write completes or fails as a whole. (It also spares the driver a
// goroutine per statement, which it starts to watch a cancellable context.)
func (r Reader) statementContext(ctx context.Context, query string) context.Context {
	if r.batch != nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (r Reader) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = r.statementContext(ctx, query)
	if st := r.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return r.q.ExecContext(ctx, query, r.sql.bind(args)...)
}

func (r Reader) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	r.count(ctx)
	ctx = r.statementContext(ctx, query)
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.q.QueryContext(ctx, query, r.sql.bind(args)...)
}

func (r Reader) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	r.count(ctx)
	ctx = r.statementContext(ctx, query)
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.q.QueryRowContext(ctx, query, r.sql.bind(args)...)
}

// rowScanner is a row to scan: *sql.Row or *sql.Rows.
type rowScanner = interface{ Scan(...any) error }

// queryList runs query and scans each row with scan, in order; no row gives an empty,
// non-nil list (a JSON [] rather than null).
func queryList[T any](ctx context.Context, r Reader, scan func(rowScanner) (*T, error), query string, args ...any) ([]T, error) {
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// ids runs a query of one integer column and lists its values in order.
func (r Reader) ids(ctx context.Context, query string, args ...any) ([]int64, error) {
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// execOne runs a statement that must change a row: ErrNotFound when it changed none.
func (r Reader) execOne(ctx context.Context, query string, args ...any) error {
	res, err := r.exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// limitClause writes a LIMIT into the SQL text. A bound LIMIT ? makes SQLite re-prepare
// the statement on every run (measured: 27 us against 17 us for a 51-row page); limits
// are integers, so the text is safe, and the few distinct values each get cached.
func limitClause(n int) string { return " LIMIT " + strconv.Itoa(n) }

// params is n numbered parameters from $first on, comma-separated: params(3, 2) is
// "$3, $4". Both engines take $N.
func params(first, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("$" + strconv.Itoa(first+i))
	}
	return sb.String()
}

// insert runs an INSERT of one row whose id the caller reads with LastInsertId.
func (r Reader) insert(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.sql.insert(ctx, r, query, args)
}
