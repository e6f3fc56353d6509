package store

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// The contract: "Task search costs what the caller's project holds, not the whole
// database". The case of issue 37: a small project searched with one-letter prefixes
// beside a large one whose words begin with every letter.
const (
	bigProjectTasks   = 20_000
	smallProjectTasks = 20
	// sixteenPrefixes is the search of the issue: 16 one-letter prefixes.
	sixteenPrefixes = "a b c d e f g h i j k l m n o p"
)

// seedSearchCost makes project "big" with bigProjectTasks tasks, each of 16 words of its
// own ("a17 b17 ... p17"), and project "small" with smallProjectTasks alike, all indexed.
func seedSearchCost(t testing.TB, engine string) *Store {
	t.Helper()
	ctx := context.Background()
	s := openTestOn(t, engine)
	series := `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $2) SELECT n FROM g`
	if onPostgres(s) {
		series = `SELECT generate_series(1, $2) AS n`
	}
	err := s.Write(ctx, Author{}, func(tx *Tx) error {
		for _, p := range []struct {
			id string
			n  int
		}{{"big", bigProjectTasks}, {"small", smallProjectTasks}} {
			if err := tx.InsertProject(ctx, &model.Project{ID: p.id, Name: p.id, Namespace: p.id, TokenSecret: "s"}); err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `INSERT INTO tasks (project_id, summary, details, status, source, task_type, created_at, updated_at)
				SELECT $1, replace('a# b# c# d# e# f# g# h#', '#', CAST(n AS TEXT)), replace('i# j# k# l# m# n# o# p#', '#', CAST(n AS TEXT)),
					'Todo', 'user', 'standard', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM (`+series+`) AS series`, p.id, p.n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for more := true; more; {
		if err := s.Write(ctx, Author{}, func(tx *Tx) (err error) {
			more, err = tx.IndexTaskSearch(ctx, 5000)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if onPostgres(s) {
		// As autovacuum leaves the table: analyzed, and the GIN index's pending list (the
		// last writes of every project, which every search reads) moved into the index.
		if _, err := s.writer.ExecContext(ctx, `VACUUM ANALYZE tasks`); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestTaskSearchReadsItsProjectsTerms (SQLite): FTS5 reads a prefix query by merging
// every term of the index with that prefix, whatever else the query says. The terms a
// search of the small project reads are the small project's own: for each one-letter
// prefix, its 20 words, not the big project's 20,000 more.
func TestTaskSearchReadsItsProjectsTerms(t *testing.T) {
	ctx := context.Background()
	s := seedSearchCost(t, "sqlite")
	if _, err := s.writer.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.search_terms USING fts5vocab(main, 'tasks_fts', 'row')`); err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`"([^"]*)"\*`)
	for _, letter := range strings.Fields(sixteenPrefixes) {
		_, args := TaskFilter{ProjectID: "small", Query: letter}.where(sqliteSQL)
		m := quoted.FindStringSubmatch(args[len(args)-1].(string)) // the MATCH: "prefix"*
		if m == nil {
			t.Fatalf("MATCH %v", args)
		}
		var terms int
		if err := s.writer.QueryRowContext(ctx, `SELECT COUNT(*) FROM temp.search_terms WHERE substr(term, 1, length($1)) = $1`, m[1]).Scan(&terms); err != nil {
			t.Fatal(err)
		}
		if terms != smallProjectTasks {
			t.Errorf("a search of the small project for %q reads %d terms of the index, want its own %d", letter, terms, smallProjectTasks)
		}
	}
	tasks, _, err := s.Read().Tasks(ctx, TaskFilter{ProjectID: "small", Query: sixteenPrefixes})
	if err != nil || len(tasks) != smallProjectTasks {
		t.Fatalf("the search found %d tasks (%v), want the small project's %d", len(tasks), err, smallProjectTasks)
	}
}

// TestPostgresTaskSearchReadsItsProject: on PostgreSQL the search of the small project
// touches a few pages, whatever the big project holds: EXPLAIN (ANALYZE, BUFFERS) of the
// page, with its parameters (a custom plan) and prepared (the generic plan).
func TestPostgresTaskSearchReadsItsProject(t *testing.T) {
	pgtest.DB(t) // PostgreSQL is required here, as in every PostgreSQL test
	ctx := context.Background()
	s := seedSearchCost(t, "postgres")
	conn, err := s.reader.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The index's tags (migration 00030) are those the search asks for.
	for _, project := range []string{"small", "prj_0123456789", "é"} {
		var tag string
		if err := conn.QueryRowContext(ctx, `SELECT task_search_tag($1)`, project).Scan(&tag); err != nil || tag != searchTag(project) {
			t.Fatalf("PostgreSQL tags %q %q (%v), the store %q", project, tag, err, searchTag(project))
		}
	}
	q, args := TaskFilter{ProjectID: "small", Query: sixteenPrefixes, Limit: 50}.page(`SELECT `+postgresSQL.taskColumns+` FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id`, postgresSQL)
	if _, err := conn.ExecContext(ctx, `PREPARE search AS `+q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	literals := make([]string, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			literals[i] = "'" + s + "'" // the test's own words: nothing to escape
		} else {
			literals[i] = fmt.Sprint(a)
		}
	}
	buffers := regexp.MustCompile(`Buffers: shared hit=(\d+)(?: read=(\d+))?`)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = `+mode); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.QueryContext(ctx, `EXPLAIN (ANALYZE, BUFFERS) EXECUTE search(`+strings.Join(literals, ", ")+`)`)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			rows.Scan(&line)
			plan = append(plan, line)
		}
		rows.Close()
		m := buffers.FindStringSubmatch(strings.Join(plan, "\n")) // the top node's: the whole query's
		if m == nil {
			t.Fatalf("%s: no buffers in the plan:\n%s", mode, strings.Join(plan, "\n"))
		}
		hit, _ := strconv.Atoi(m[1])
		read, _ := strconv.Atoi(m[2] + "0")
		if pages := hit + read/10; pages > 100 {
			t.Errorf("%s: the search of %d tasks read %d pages beside %d tasks of another project:\n%s", mode, smallProjectTasks, pages, bigProjectTasks, strings.Join(plan, "\n"))
		} else {
			t.Logf("%s: %d pages", mode, pages)
		}
	}
}

// BenchmarkTaskSearchBesideABigProject: the search (16 one-letter prefixes in a
// project of 20 tasks, beside 20,000 tasks of another project), on each engine.
func BenchmarkTaskSearchBesideABigProject(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			s := seedSearchCost(b, engine)
			ctx := context.Background()
			for b.Loop() {
				tasks, _, err := s.Read().Tasks(ctx, TaskFilter{ProjectID: "small", Query: sixteenPrefixes, Limit: 50})
				if err != nil || len(tasks) != smallProjectTasks {
					b.Fatalf("%d tasks, %v", len(tasks), err)
				}
			}
		})
	}
}
