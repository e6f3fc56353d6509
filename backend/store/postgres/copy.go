package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/agentdesk/agentdesk/backend/store/sqlite"
)

// Moving a SQLite data directory into PostgreSQL (agentdesk migrate --to postgres://…).
//
// The SQLite database is read in one read transaction: a consistent snapshot, so a
// server may keep running on it (what it writes after the snapshot is not copied). The
// PostgreSQL database must be empty; its schema is made by Open (the same as a
// server's), then every table is copied, parents before children, ids and event seqs as
// they are, in one PostgreSQL transaction: a failure leaves no row behind (the empty
// schema stays, and a second run accepts it). User triggers (task_counts) are disabled
// during the copy, so that task_counts is SQLite's own, row for row. Each identity
// sequence is then set past the highest id SQLite ever gave (its rows or sqlite_sequence,
// which remembers deleted ones): ids are never reused.

// CopyResult is what CopyFromSQLite copied.
type CopyResult struct {
	Tables  []CopiedTable // in the order copied
	Rows    int64
	Elapsed time.Duration
}

// CopiedTable is one table's row count.
type CopiedTable struct {
	Table string
	Rows  int64
}

// CopyProgress hears about the copy: every pgcopyProgressEvery rows of a table, and once when
// the table is done.
type CopyProgress func(table string, rows int64, done bool)

const pgcopyProgressEvery = 50_000

// ErrTargetNotEmpty is a target database that holds data or other tables.
var ErrTargetNotEmpty = errors.New("the target database is not empty")

// OlderSchemaError is a SQLite database that this agentdesk has not migrated yet.
type OlderSchemaError struct{ Version, Known int64 }

func (e *OlderSchemaError) Error() string {
	return fmt.Sprintf("the SQLite database has schema %d and this agentdesk's is %d: start this agentdesk once on the data directory (and stop it) so that it brings the database up to date, then migrate", e.Version, e.Known)
}

// pgcopySQLiteOnly are the SQLite tables with no PostgreSQL twin, which are not copied: FTS5
// (and its shadow tables, found by name) is replaced by GIN indexes over the tasks and
// vector_chunks tables themselves, and the rest is SQLite's or goose's bookkeeping.
var pgcopySQLiteOnly = map[string]bool{
	"tasks_fts_pending": true, // the FTS5 work list; PostgreSQL's indexes are kept by the writes
	"goose_db_version":  true, // each engine has its own
	"sqlite_sequence":   true, // read for the identity sequences, not copied
}

// pgcopyColumn is a column of the PostgreSQL schema.
type pgcopyColumn struct {
	name, typ string // typ as information_schema.columns.data_type says
	identity  bool
}

// pgcopyTable is a table of the PostgreSQL schema and its columns, in order.
type pgcopyTable struct {
	name    string
	columns []pgcopyColumn
}

// CopyFromSQLite copies the agentdesk SQLite database at sqlitePath into the empty
// PostgreSQL database at pgURL, as described above. progress may be nil. The errors
// never hold pgURL's password.
func CopyFromSQLite(ctx context.Context, sqlitePath, pgURL string, progress CopyProgress) (*CopyResult, error) {
	start := time.Now()
	if !IsURL(pgURL) {
		return nil, errors.New("the target must be a postgres://user:password@host/database URL")
	}
	if progress == nil {
		progress = func(string, int64, bool) {}
	}

	// The snapshot: one read transaction, held until the copy is committed.
	src, err := pgcopyOpenSource(sqlitePath)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	stx, err := src.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", sqlitePath, err)
	}
	defer stx.Rollback()
	if err := pgcopyCheckSchema(ctx, stx, sqlitePath); err != nil {
		return nil, err
	}
	sqliteSeqs, err := pgcopySequences(ctx, stx)
	if err != nil {
		return nil, err
	}

	// The target: empty before anything is written to it, then given the schema.
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", Redacted(pgURL), err)
	}
	defer conn.Close(context.Background())
	if err := pgcopyCheckEmpty(ctx, conn); err != nil {
		return nil, err
	}
	schema, err := Open(ctx, pgURL)
	if err != nil {
		return nil, fmt.Errorf("create the schema in %s: %w", Redacted(pgURL), err)
	}
	schema.Close()
	if err := pgcopyCheckVersion(ctx, stx, conn); err != nil {
		return nil, err
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.Background())
	tables, err := pgcopyTables(ctx, tx)
	if err != nil {
		return nil, err
	}
	if err := pgcopyCheckTables(ctx, stx, tables); err != nil {
		return nil, err
	}
	// Nobody writes the tables until the copy commits; checked empty again under the lock
	// (two migrations at once, or a server that started on the database meanwhile).
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = pgx.Identifier{t.name}.Sanitize()
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+strings.Join(names, ", ")+" IN EXCLUSIVE MODE"); err != nil {
		return nil, fmt.Errorf("lock the target's tables: %w", err)
	}
	if err := pgcopyCheckEmpty(ctx, tx); err != nil {
		return nil, err
	}
	triggered, err := pgcopyTriggered(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, t := range triggered {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+pgx.Identifier{t}.Sanitize()+" DISABLE TRIGGER USER"); err != nil {
			return nil, fmt.Errorf("disable the triggers of %s during the copy (migrate as the role that owns the tables): %w", t, err)
		}
	}

	res := &CopyResult{}
	for _, t := range tables {
		n, err := pgcopyTableRows(ctx, stx, tx, t, progress)
		if err != nil {
			return nil, err
		}
		progress(t.name, n, true)
		res.Tables = append(res.Tables, CopiedTable{Table: t.name, Rows: n})
		res.Rows += n
	}

	for _, t := range triggered {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+pgx.Identifier{t}.Sanitize()+" ENABLE TRIGGER USER"); err != nil {
			return nil, err
		}
	}
	if err := pgcopySetIdentities(ctx, tx, tables, sqliteSeqs); err != nil {
		return nil, err
	}
	// Statistics now rather than at autovacuum's next pass: without any, PostgreSQL
	// would read all of a project's tasks, and sort them, for each page of its list
	// (TestPostgresListPlan). ANALYZE counts the rows this transaction wrote.
	if _, err := tx.Exec(ctx, "ANALYZE "+strings.Join(names, ", ")); err != nil {
		return nil, fmt.Errorf("analyze the copied tables: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit the copy: %w", err)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// pgcopyOpenSource opens the database for reading, through its WAL like a server's
// connection (not immutable: a server may write it meanwhile), without creating it.
func pgcopyOpenSource(path string) (*sql.DB, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("there is no agentdesk database at %s: nothing to migrate (check --data or AGENTDESK_DATA)", path)
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a file", path)
	}
	q := url.Values{}
	q.Set("mode", "rw") // never create it
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// pgcopyCheckSchema checks that the SQLite database is agentdesk's, at exactly this
// agentdesk's schema: the PostgreSQL schema is made at that version.
func pgcopyCheckSchema(ctx context.Context, stx *sql.Tx, path string) error {
	var n int
	err := stx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table'
		AND name IN ('goose_db_version', 'projects', 'tasks', 'events')`).Scan(&n)
	if err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return fmt.Errorf("%s is not a SQLite database", path)
		}
		return fmt.Errorf("read %s: %w", path, err)
	}
	var version sql.NullInt64
	if n == 4 {
		if err := stx.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&version); err != nil {
			return err
		}
	}
	if version.Int64 < 1 {
		return fmt.Errorf("%s is a SQLite database but not an agentdesk one (it lacks agentdesk's tables)", path)
	}
	known := sqlite.KnownSchema()
	switch {
	case version.Int64 > known:
		return &sqlite.NewerSchemaError{Version: version.Int64, Known: known}
	case version.Int64 < known:
		return &OlderSchemaError{Version: version.Int64, Known: known}
	}
	return nil
}

// pgcopyCheckVersion: the PostgreSQL schema Open made is the twin of SQLite's.
func pgcopyCheckVersion(ctx context.Context, stx *sql.Tx, conn *pgx.Conn) error {
	var sv, pv int64
	if err := stx.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&sv); err != nil {
		return err
	}
	if err := conn.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&pv); err != nil {
		return err
	}
	if sv != pv {
		return fmt.Errorf("the PostgreSQL schema is at version %d and the SQLite one at %d: this agentdesk cannot copy between them", pv, sv)
	}
	return nil
}

func pgcopySequences(ctx context.Context, stx *sql.Tx) (map[string]int64, error) {
	out := map[string]int64{}
	rows, err := stx.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`)
	if err != nil {
		return nil, fmt.Errorf("read sqlite_sequence: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			return nil, err
		}
		out[name] = seq
	}
	return out, rows.Err()
}

// pgcopyQuerier is a connection or a transaction.
type pgcopyQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// pgcopyCheckEmpty refuses a database with rows in any table of the current schema
// (goose's aside), or with tables that are not agentdesk's. An agentdesk schema with no
// rows is fine: a migration that failed leaves one.
func pgcopyCheckEmpty(ctx context.Context, q pgcopyQuerier) error {
	tables, err := pgcopyStrings(ctx, q, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname`)
	if err != nil {
		return fmt.Errorf("list the target's tables: %w", err)
	}
	if len(tables) == 0 {
		return nil
	}
	// goose_db_version alone could be another goose user's: agentdesk's has projects beside it.
	if !slices.Contains(tables, "goose_db_version") || !slices.Contains(tables, "projects") {
		return fmt.Errorf("%w: it has tables that are not agentdesk's (%s); give an empty database (createdb)", ErrTargetNotEmpty, pgcopyList(tables))
	}
	var full []string
	for _, t := range tables {
		if t == "goose_db_version" {
			continue
		}
		rows, err := pgcopyStrings(ctx, q, `SELECT 'x' FROM `+pgx.Identifier{t}.Sanitize()+` LIMIT 1`)
		if err != nil {
			return fmt.Errorf("read the target's %s: %w", t, err)
		}
		if len(rows) > 0 {
			full = append(full, t)
		}
	}
	if len(full) > 0 {
		return fmt.Errorf("%w: it already holds agentdesk data (rows in %s); migrate copies into an empty database only: create a new one (createdb), or drop this one and create it again", ErrTargetNotEmpty, pgcopyList(full))
	}
	return nil
}

func pgcopyList(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

func pgcopyStrings(ctx context.Context, q pgcopyQuerier, query string) ([]string, error) {
	rows, err := q.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// pgcopyTables lists agentdesk's tables with their columns, parents before children
// (by foreign key), so that the copy meets every reference's target first.
func pgcopyTables(ctx context.Context, tx pgx.Tx) ([]pgcopyTable, error) {
	rows, err := tx.Query(ctx, `SELECT table_name::text, column_name::text, data_type::text, is_identity = 'YES'
		FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'goose_db_version'
		ORDER BY table_name, ordinal_position`)
	if err != nil {
		return nil, err
	}
	byName := map[string]*pgcopyTable{}
	var order []string
	for rows.Next() {
		var table string
		var c pgcopyColumn
		if err := rows.Scan(&table, &c.name, &c.typ, &c.identity); err != nil {
			rows.Close()
			return nil, err
		}
		t := byName[table]
		if t == nil {
			t = &pgcopyTable{name: table}
			byName[table] = t
			order = append(order, table)
		}
		t.columns = append(t.columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}

	parents := map[string][]string{}
	rows, err = tx.Query(ctx, `SELECT child.relname::text, parent.relname::text FROM pg_constraint k
		JOIN pg_class child ON child.oid = k.conrelid JOIN pg_class parent ON parent.oid = k.confrelid
		JOIN pg_namespace n ON n.oid = child.relnamespace
		WHERE k.contype = 'f' AND n.nspname = current_schema()`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var child, parent string
		if err := rows.Scan(&child, &parent); err != nil {
			rows.Close()
			return nil, err
		}
		if child != parent {
			parents[child] = append(parents[child], parent)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// Topological order; among the tables ready, by name, so that runs are alike.
	var out []pgcopyTable
	done := map[string]bool{}
	for len(out) < len(order) {
		progressed := false
		for _, name := range order {
			if done[name] {
				continue
			}
			ready := true
			for _, p := range parents[name] {
				ready = ready && (done[p] || byName[p] == nil)
			}
			if ready {
				done[name] = true
				out = append(out, *byName[name])
				progressed = true
			}
		}
		if !progressed {
			return nil, errors.New("the PostgreSQL schema's foreign keys form a cycle: no copy order")
		}
	}
	return out, nil
}

// pgcopyCheckTables: every SQLite table is either copied, with the same columns, or one
// that PostgreSQL does without. Anything else is a schema twin gone wrong: refused
// rather than dropped on the way.
func pgcopyCheckTables(ctx context.Context, stx *sql.Tx, tables []pgcopyTable) error {
	rows, err := stx.QueryContext(ctx, `SELECT m.name, c.name FROM sqlite_schema m, pragma_table_info(m.name) c
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
		AND m.name NOT IN (SELECT v.name || s.suffix FROM sqlite_schema v,
			(SELECT '' AS suffix UNION ALL SELECT '_config' UNION ALL SELECT '_data' UNION ALL SELECT '_docsize'
			 UNION ALL SELECT '_idx' UNION ALL SELECT '_content') s
			WHERE v.sql LIKE 'CREATE VIRTUAL TABLE%')`)
	if err != nil {
		return fmt.Errorf("list the SQLite tables: %w", err)
	}
	defer rows.Close()
	have := map[string][]string{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return err
		}
		if !pgcopySQLiteOnly[table] {
			have[table] = append(have[table], column)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		cols, ok := have[t.name]
		if !ok {
			return fmt.Errorf("the SQLite database has no table %s, which the PostgreSQL schema has", t.name)
		}
		delete(have, t.name)
		var want []string
		for _, c := range t.columns {
			want = append(want, c.name)
		}
		slices.Sort(cols)
		slices.Sort(want)
		if !slices.Equal(cols, want) {
			return fmt.Errorf("table %s: SQLite has the columns %s, PostgreSQL %s: the schemas differ", t.name, strings.Join(cols, ","), strings.Join(want, ","))
		}
	}
	if len(have) > 0 {
		left := slices.Sorted(maps.Keys(have))
		return fmt.Errorf("the SQLite table %s has no PostgreSQL twin: it would not be copied", left[0])
	}
	return nil
}

func pgcopyTriggered(ctx context.Context, tx pgx.Tx) ([]string, error) {
	return pgcopyStrings(ctx, tx, `SELECT DISTINCT c.relname::text FROM pg_trigger g
		JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE NOT g.tgisinternal AND n.nspname = current_schema() ORDER BY 1`)
}

// pgcopyTableRows streams one table from SQLite into PostgreSQL with COPY.
func pgcopyTableRows(ctx context.Context, stx *sql.Tx, tx pgx.Tx, t pgcopyTable, progress CopyProgress) (int64, error) {
	cols := make([]string, len(t.columns))
	quoted := make([]string, len(t.columns))
	for i, c := range t.columns {
		cols[i] = c.name
		quoted[i] = `"` + c.name + `"`
	}
	query := "SELECT " + strings.Join(quoted, ", ") + " FROM " + `"` + t.name + `"`
	if slices.ContainsFunc(t.columns, func(c pgcopyColumn) bool { return c.name == "id" && c.identity }) {
		query += " ORDER BY id"
	}
	rows, err := stx.QueryContext(ctx, query)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", t.name, err)
	}
	defer rows.Close()
	s := &pgcopyRows{rows: rows, table: t, progress: progress, raw: make([]any, len(cols)), ptrs: make([]any, len(cols))}
	for i := range s.raw {
		s.ptrs[i] = &s.raw[i]
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, cols, s)
	if s.err != nil {
		return 0, s.err
	}
	if err != nil {
		return 0, fmt.Errorf("copy %s: %w", t.name, err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", t.name, err)
	}
	return n, nil
}

// pgcopyRows is pgx's CopyFromSource over a SQLite query, each value converted to its
// PostgreSQL column's type.
type pgcopyRows struct {
	rows      *sql.Rows
	table     pgcopyTable
	progress  CopyProgress
	raw, ptrs []any
	n         int64
	err       error
}

func (s *pgcopyRows) Next() bool {
	if s.err != nil || !s.rows.Next() {
		return false
	}
	s.n++
	if s.n%pgcopyProgressEvery == 0 {
		s.progress(s.table.name, s.n, false)
	}
	return true
}

func (s *pgcopyRows) Values() ([]any, error) {
	if err := s.rows.Scan(s.ptrs...); err != nil {
		s.err = fmt.Errorf("read %s: %w", s.table.name, err)
		return nil, s.err
	}
	out := make([]any, len(s.raw))
	for i, c := range s.table.columns {
		v, err := pgcopyValue(s.raw[i], c.typ)
		if err != nil {
			s.err = fmt.Errorf("%s.%s, %s: %w", s.table.name, c.name, s.where(), err)
			return nil, s.err
		}
		out[i] = v
	}
	return out, nil
}

func (s *pgcopyRows) Err() error { return s.err }

// where names the row in an error: its id, or its rank in the copy.
func (s *pgcopyRows) where() string {
	for i, c := range s.table.columns {
		if c.name == "id" {
			return fmt.Sprintf("row id %v", s.raw[i])
		}
	}
	return fmt.Sprintf("row %d", s.n)
}

// pgcopyValue turns a value SQLite gave into what pgx writes to a column of type typ.
// SQLite's typing is loose: a TEXT column may hold a BLOB, an INTEGER one text; what
// converts without loss is converted, anything else is an error naming the row.
func pgcopyValue(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "bigint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == float64(int64(x)) {
				return int64(x), nil
			}
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, nil
			}
		case []byte:
			if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("%v (%T) is not an integer", v, v)
	case "text":
		s, err := pgcopyText(v)
		if err != nil {
			return nil, err
		}
		if !utf8.ValidString(s) {
			return nil, errors.New("the text is not valid UTF-8, which PostgreSQL refuses")
		}
		if strings.ContainsRune(s, 0) {
			return nil, errors.New("the text holds a NUL character, which PostgreSQL refuses")
		}
		return s, nil
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
		return nil, fmt.Errorf("%v (%T) is not bytes", v, v)
	case "jsonb":
		s, err := pgcopyText(v)
		if err != nil {
			return nil, err
		}
		if !json.Valid([]byte(s)) {
			return nil, fmt.Errorf("%.40q is not JSON", s)
		}
		return s, nil
	}
	return nil, fmt.Errorf("the PostgreSQL type %s is not one the copy knows", typ)
}

func pgcopyText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("%v (%T) is not text", v, v)
}

// pgcopySetIdentities sets every identity sequence past the highest id SQLite gave, so that
// the next row's id is above every id that ever was.
func pgcopySetIdentities(ctx context.Context, tx pgx.Tx, tables []pgcopyTable, sqliteSeqs map[string]int64) error {
	for _, t := range tables {
		for _, c := range t.columns {
			if !c.identity {
				continue
			}
			var top int64
			if err := tx.QueryRow(ctx, "SELECT COALESCE(max("+pgx.Identifier{c.name}.Sanitize()+"), 0) FROM "+pgx.Identifier{t.name}.Sanitize()).Scan(&top); err != nil {
				return err
			}
			top = max(top, sqliteSeqs[t.name])
			value, called := top, true
			if top < 1 {
				value, called = 1, false // the first id will be 1
			}
			if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), $3, $4)`,
				pgx.Identifier{t.name}.Sanitize(), c.name, value, called); err != nil {
				return fmt.Errorf("set the id sequence of %s: %w", t.name, err)
			}
		}
	}
	return nil
}
