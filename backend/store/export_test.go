package store

import (
	"reflect"
	"strings"

	"github.com/agentdesk/agentdesk/backend/model"
)

// FailNextSync makes the store's next fsync of a write with an event of eventType fail
// with err, as a failing disk would (a background write's fsync, say a prune's, is left
// alone, so that the test knows which write the failure was for); the fsyncs after it
// succeed again (which must not make the store carry on).
func FailNextSync(s *Store, err error, eventType string) {
	var once bool // the syncer alone calls the hook
	hook := func(events []model.Event) error {
		if once {
			return nil
		}
		for _, e := range events {
			if e.Type == eventType {
				once = true
				return err
			}
		}
		return nil
	}
	sqliteOf(s).beforeSync.Store(&hook)
}

// StatementTexts is every statement text the store has prepared on its two pools: what
// the work done so far has run (up to the caches' bound).
func StatementTexts(s *Store) []string {
	var out []string
	for _, c := range []*stmtCache{sqliteOf(s).readStmts, sqliteOf(s).writeStmts} {
		c.mu.RLock()
		for q := range c.m {
			out = append(out, q)
		}
		c.mu.RUnlock()
	}
	return out
}

// PostgresText is a statement text as it will run on PostgreSQL.
// A statement of the SQLite dialect becomes its PostgreSQL twin, and SQLite's column
// lists in a statement built at run time PostgreSQL's.
func PostgresText(query string) string {
	sqlite, postgres := reflect.ValueOf(*sqliteSQL), reflect.ValueOf(*postgresSQL)
	for i := range sqlite.NumField() {
		if f := sqlite.Field(i); f.Kind() == reflect.String && f.String() == query {
			return postgres.Field(i).String()
		}
	}
	query = strings.ReplaceAll(query, sqliteSQL.taskColumns, postgresSQL.taskColumns)
	return strings.ReplaceAll(query, sqliteSQL.vectorSpaceColumns, postgresSQL.vectorSpaceColumns)
}

// sqliteOf and postgresOf are the engine under s; onPostgres says which it is.
func sqliteOf(s *Store) *sqliteEngine     { return s.eng.(*sqliteEngine) }
func postgresOf(s *Store) *postgresEngine { return s.eng.(*postgresEngine) }
func onPostgres(s *Store) bool {
	_, ok := s.eng.(*postgresEngine)
	return ok
}
