package store_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPostgresStatementWorklist runs the life of a few tasks through REST on SQLite,
// then prepares every statement text the store ran, rebound for PostgreSQL, on a real
// PostgreSQL with the postgres schema: PostgreSQL parses and type-checks each one. The
// statements it refuses are the work left for the PostgreSQL store (docs/postgres.md);
// the test logs them (go test -v -run TestPostgresStatementWorklist) and fails only if
// the rebinding broke what PostgreSQL accepts: a statement without SQLite-only syntax
// that does not prepare.
func TestPostgresStatementWorklist(t *testing.T) {
	ctx := context.Background()
	pg, err := store.OpenPostgres(ctx, pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()

	s := serve(t, t.TempDir())
	must := func(want int, method, path, body string) string {
		t.Helper()
		code, got := s.call(t, method, path, body)
		if code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, code, got, want)
		}
		return got
	}
	if _, err := s.Service.CreateAgent(ctx, auth.Owner(s.project), "builder"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		must(http.StatusCreated, "POST", "/api/tasks", fmt.Sprintf(`{"summary":"Deploy invoicing %d","details":"d","steps":[{"title":"a"},{"title":"b"}]}`, i))
	}
	must(http.StatusOK, "GET", "/api/tasks", "")
	must(http.StatusOK, "GET", "/api/tasks?limit=2", "")
	must(http.StatusOK, "GET", "/api/tasks?q=invoic", "")
	must(http.StatusOK, "GET", "/api/tasks/counts", "")
	must(http.StatusOK, "GET", "/api/tasks/1", "")
	must(http.StatusOK, "PATCH", "/api/tasks/1", `{"summary":"Deploy invoicing v2"}`)
	must(http.StatusOK, "PUT", "/api/tasks/1/steps/0/status", `{"status":"completed"}`)
	must(http.StatusOK, "PUT", "/api/tasks/1/status", `{"status":"Waiting","waiting_details":"which region?"}`)
	must(http.StatusOK, "POST", "/api/tasks/1/respond", `{"response":"eu-west"}`)
	must(http.StatusOK, "PUT", "/api/tasks/1/status", `{"status":"Done"}`)
	must(http.StatusNoContent, "DELETE", "/api/tasks/2", "")
	must(http.StatusOK, "DELETE", "/api/tasks/done", "")

	texts := store.StatementTexts(s.Service.Store())
	slices.Sort(texts)
	texts = slices.Compact(texts)
	if len(texts) < 10 {
		t.Fatalf("only %d statements recorded", len(texts))
	}
	var refused []string
	for _, q := range texts {
		pq := store.PostgresText(q)
		st, err := pg.PrepareContext(ctx, pq)
		if err == nil {
			st.Close()
			continue
		}
		if !sqliteOnly(q) {
			t.Errorf("PostgreSQL refuses a statement with no SQLite-only syntax known here (a rebinding bug, or add its syntax to sqliteOnly):\n%s\n-> %v", pq, err)
		}
		refused = append(refused, fmt.Sprintf("%s\n    -> %v", oneLine(pq), err))
	}
	t.Logf("%d statements, %d prepare on PostgreSQL as they are; %d need a PostgreSQL text:\n%s",
		len(texts), len(texts)-len(refused), len(refused), strings.Join(refused, "\n"))
}

// sqliteOnly reports SQLite syntax that PostgreSQL does not have.
func sqliteOnly(q string) bool {
	for _, s := range []string{"PRAGMA", "json_", "OR IGNORE", "OR REPLACE", "MATCH", "IIF(", "instr(", "rowid", "strftime", "unixepoch",
		"sqlite_", "_fts", "group_concat", "GLOB", "printf(", "datetime(", "julianday"} {
		if strings.Contains(q, s) {
			return true
		}
	}
	return false
}

func oneLine(q string) string { return strings.Join(strings.Fields(q), " ") }
