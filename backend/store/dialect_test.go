package store

import "testing"

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM tasks WHERE id = ? AND project_id = ?`, `SELECT * FROM tasks WHERE id = $1 AND project_id = $2`},
		{`UPDATE tasks SET steps = json_set(steps, '$[' || ?2 || '].status', ?1) WHERE id = ?3 AND ?2 BETWEEN 0 AND 1`,
			`UPDATE tasks SET steps = json_set(steps, '$[' || $2 || '].status', $1) WHERE id = $3 AND $2 BETWEEN 0 AND 1`},
		{`SELECT ?2, ?`, `SELECT $2, $3`}, // SQLite: a bare ? follows the largest number so far
		{`SELECT '?', "a?b", ? -- why?` + "\n" + `/* ? */ , ?`, `SELECT '?', "a?b", $1 -- why?` + "\n" + `/* ? */ , $2`},
		{`SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`},
		{`SELECT 'open ?`, `SELECT 'open ?`},
	} {
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q)\n  = %q\nwant %q", c.in, got, c.want)
		}
		if got := postgresText(c.in); got != c.want {
			t.Errorf("postgresText(%q) = %q", c.in, got)
		}
	}
}
