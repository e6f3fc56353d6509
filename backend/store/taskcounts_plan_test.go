package store

import (
	"context"
	"strings"
	"testing"
)

// TestSearchCountsStartFromTheMatches: a search's counts read the matching tasks by id,
// never by walking the project's index (which is every task of the project: seconds at
// a million tasks); the plain counts come from task_counts.
func TestSearchCountsStartFromTheMatches(t *testing.T) {
	s := openTest(t)
	f := TaskFilter{ProjectID: "p", Query: "report"}
	where, args := f.where(sqliteSQL)
	rows, err := s.reader.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+taskCountsQuery(f, where, sqliteSQL), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	got := strings.Join(plan, "; ")
	if strings.Contains(got, "tasks_project") || !strings.Contains(got, "PRIMARY KEY") {
		t.Fatalf("the search's counts walk the project's index: %s", got)
	}
}
