package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The SQLite tables with no PostgreSQL twin, and why.
var sqliteOnlyTables = map[string]string{
	"tasks_fts":         "FTS5 index: on PostgreSQL the GIN index tasks_search over to_tsvector('agentdesk_simple', task_search_words(project_id, summary, details)): each word behind its project's tag (migration 00030)",
	"tasks_fts_pending": "FTS5 is filled in bulk after the write; PostgreSQL's GIN index is kept by the write itself (its own pending list batches the work)",
	"vector_chunks_fts": "FTS5 index: on PostgreSQL the GIN index vector_chunks_search over to_tsvector('agentdesk_english', text), non-alphanumerics as spaces",
	"goose_db_version":  "goose's own table, of a different shape per dialect",
}

// The PostgreSQL indexes with no SQLite twin, and why.
var postgresOnlyIndexes = map[string]string{
	"tasks_search":         "stands for the FTS5 table tasks_fts",
	"vector_chunks_search": "stands for the FTS5 table vector_chunks_fts",
}

// Columns whose type is not the plain translation (INTEGER bigint, TEXT text, BLOB bytea).
var postgresTypes = map[string]string{
	"tasks.steps":     "jsonb", // the SQL sets a step's status inside it (jsonb_set)
	"jobs.steps":      "jsonb",
	"webhooks.events": "jsonb",
}

type column struct {
	table, name, typ string
	notNull          bool
}

func (c column) String() string {
	n := "NULL"
	if c.notNull {
		n = "NOT NULL"
	}
	return fmt.Sprintf("%s.%s %s %s", c.table, c.name, c.typ, n)
}

// TestPostgresSchemaMatchesSQLite: the PostgreSQL baseline, applied to a real server, has
// every table, column (with its nullability and translated type) and named index of
// SQLite's schema at the same version, and nothing else but what the allow-lists above
// give a reason for.
func TestPostgresSchemaMatchesSQLite(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	pg, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	// Twice: a second server starting on the same database finds nothing to do.
	if again, err := postgres.Open(ctx, url); err != nil {
		t.Fatalf("second open: %v", err)
	} else {
		again.Close()
	}

	s, err := Open(ctx, filepath.Join(t.TempDir(), "agentdesk.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var sqliteVersion, pgVersion int64
	if err := s.reader.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&sqliteVersion); err != nil {
		t.Fatal(err)
	}
	if err := pg.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&pgVersion); err != nil {
		t.Fatal(err)
	}
	if sqliteVersion != pgVersion {
		t.Errorf("schema versions: SQLite %d, PostgreSQL %d: a SQLite migration lacks its twin in migrations/postgres", sqliteVersion, pgVersion)
	}

	// SQLite: the tables, minus FTS5's shadow tables, and their columns.
	var want []column
	rows, err := s.reader.QueryContext(ctx, `SELECT m.name, c.name, upper(c.type), c."notnull" OR c.pk > 0
		FROM sqlite_schema m, pragma_table_info(m.name) c
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
		AND m.name NOT IN (SELECT name || suffix FROM sqlite_schema, (SELECT '_config' AS suffix UNION ALL SELECT '_data' UNION ALL SELECT '_docsize' UNION ALL SELECT '_idx') WHERE sql LIKE 'CREATE VIRTUAL TABLE%')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c column
		// A primary key's column is never NULL on either side (SQLite's pragma says 0 for
		// an INTEGER PRIMARY KEY that is not declared NOT NULL).
		if err := rows.Scan(&c.table, &c.name, &c.typ, &c.notNull); err != nil {
			t.Fatal(err)
		}
		if _, ok := sqliteOnlyTables[c.table]; ok {
			continue
		}
		switch c.typ {
		case "INTEGER":
			c.typ = "bigint"
		case "TEXT":
			c.typ = "text"
		case "BLOB":
			c.typ = "bytea"
		}
		if typ, ok := postgresTypes[c.table+"."+c.name]; ok {
			c.typ = typ
		}
		want = append(want, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	var got []column
	rows, err = pg.QueryContext(ctx, `SELECT table_name, column_name, data_type, is_nullable = 'NO'
		FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'goose_db_version'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.table, &c.name, &c.typ, &c.notNull); err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 150 {
		t.Fatalf("only %d SQLite columns read: the query above is wrong", len(want))
	}
	diff(t, "column", strings2(want), strings2(got))

	// Named indexes (SQLite's automatic ones are its UNIQUE and PRIMARY KEY constraints,
	// which the column comparison does not see; PostgreSQL's are named *_pkey and *_key).
	wantIdx := names(t, s.reader, `SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'`)
	gotIdx := names(t, pg, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
		AND indexname NOT LIKE '%\_pkey' AND indexname NOT LIKE '%\_key'`)
	gotIdx = slices.DeleteFunc(gotIdx, func(n string) bool { _, ok := postgresOnlyIndexes[n]; return ok })
	diff(t, "index", wantIdx, gotIdx)
	// And the constraints' count, table by table: the same UNIQUE and PRIMARY KEYs.
	// A WITHOUT ROWID table's primary key is the table itself, with no index of its own.
	wantUnique := names(t, s.reader, `SELECT tbl_name || ' ' || count(*) FROM sqlite_schema WHERE type = 'index' AND name LIKE 'sqlite_autoindex_%' GROUP BY tbl_name
		UNION ALL SELECT name || ' 1' FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID' AND name NOT LIKE '%_fts_%'`)
	wantUnique = slices.DeleteFunc(wantUnique, func(n string) bool { return strings.Contains(n, "_fts_") }) // FTS5's shadow tables
	gotUnique := names(t, pg, `SELECT c.conrelid::regclass::text || ' ' || count(*) FROM pg_constraint c
		JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
		WHERE n.nspname = current_schema() AND r.relname <> 'goose_db_version' AND (c.contype = 'u' OR (c.contype = 'p'
			-- an identity id stands for SQLite's INTEGER PRIMARY KEY, which has no index of its own
			AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = c.conkey[1] AND a.attidentity <> '' AND cardinality(c.conkey) = 1)))
		GROUP BY c.conrelid`)
	diff(t, "unique or primary key (table and count)", wantUnique, gotUnique)
}

func strings2(cs []column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

func names(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func diff(t *testing.T, what string, want, got []string) {
	t.Helper()
	slices.Sort(want)
	slices.Sort(got)
	var missing, extra []string
	for _, w := range want {
		if _, ok := slices.BinarySearch(got, w); !ok {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if _, ok := slices.BinarySearch(want, g); !ok {
			extra = append(extra, g)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s of SQLite missing or different on PostgreSQL:\n  %s", what, strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("%s on PostgreSQL only (add it to SQLite, or to an allow-list with the reason):\n  %s", what, strings.Join(extra, "\n  "))
	}
}

// TestPostgresTaskCounts: the PL/pgSQL triggers keep task_counts as SQLite's do (insert,
// a status change, a change that keeps the status, a delete), and the search index
// finds a task by the prefix of a word.
func TestPostgresTaskCounts(t *testing.T) {
	ctx := context.Background()
	pg, err := postgres.Open(ctx, pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, q := range []string{
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('p', 'p', 'default', 's', '2026-01-01T00:00:00Z')`,
		`INSERT INTO tasks (project_id, summary, details, status, source, task_type, created_at, updated_at)
			SELECT 'p', 'Deploy the invoicing service', 'x', 'Pending', 'api', 't', '', '' FROM generate_series(1, 3)`,
		`UPDATE tasks SET status = 'Working' WHERE id = 1`,
		`UPDATE tasks SET summary = 'Renamed' WHERE id = 2`,
		`DELETE FROM tasks WHERE id = 3`,
	} {
		if _, err := pg.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	got := names(t, pg, `SELECT status || ' ' || n FROM task_counts WHERE project_id = 'p' ORDER BY status`)
	if want := []string{"Pending 1", "Working 1"}; !slices.Equal(got, want) {
		t.Errorf("task_counts: %q, want %q", got, want)
	}
	found := names(t, pg, `SELECT id::text FROM tasks WHERE to_tsvector('simple', summary || ' ' || details) @@ to_tsquery('simple', 'invoic:*')`)
	if !slices.Equal(found, []string{"1"}) {
		t.Errorf("search for invoic*: tasks %q, want [1]", found)
	}
}
