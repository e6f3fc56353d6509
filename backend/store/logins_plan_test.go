package store

import (
	"context"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPruneLoginsByIndex: pruning the logins under way (every /login does) reads them
// by created_at's index, not by scanning them all. PostgreSQL is told to avoid a scan
// wherever it has another way, so that an empty table's plan shows whether it has one.
func TestPruneLoginsByIndex(t *testing.T) { pgtest.Engines(t, testPruneLoginsByIndex) }

func testPruneLoginsByIndex(t *testing.T, engine string) {
	ctx := context.Background()
	s := openTestOn(t, engine)
	conn, err := s.reader.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	q := strings.Replace(pruneLogins, "$1", "'2026-11-24T00:00:00Z'", 1)
	if onPostgres(s) {
		if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
			t.Fatal(err)
		}
		q = "EXPLAIN " + q
	} else {
		q = "EXPLAIN QUERY PLAN " + q
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var plan []string
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if b, ok := (*v.(*any)).([]byte); ok {
				plan = append(plan, string(b))
			} else if s, ok := (*v.(*any)).(string); ok {
				plan = append(plan, s)
			}
		}
	}
	if got := strings.Join(plan, " "); !strings.Contains(got, "oidc_logins_created_at") {
		t.Fatalf("%s does not use oidc_logins_created_at: %s", q, got)
	}
}
