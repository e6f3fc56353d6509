package store

// The store's SQL is written once for both engines, with PostgreSQL's numbered
// parameters ($1, $2, ...), which SQLite (modernc.org/sqlite) binds by number too. The
// few statements whose SQL differs have their PostgreSQL text beside the SQLite one
// (postgresSQL), registered when the package initialises; PostgreSQL runs the text
// registered for a statement, or the statement as written. No text is rewritten. Pieces
// that differ (a JSON aggregate in a column list) are chosen by a function of the
// engine (taskColumns, vectorSpaceColumns), and statements built at run time test
// Reader.pg (the task filter's search, the knowledge base keyword search).

// postgresAlternates maps a SQLite statement text to its PostgreSQL text.
var postgresAlternates = map[string]string{}

// postgresSQL registers the PostgreSQL text of a statement and returns the SQLite one.
// Call it only in package-level variable declarations.
func postgresSQL(sqlite, postgres string) string {
	postgresAlternates[sqlite] = postgres
	return sqlite
}

// postgresText is query as it runs on PostgreSQL: its registered text, or itself.
func postgresText(query string) string {
	if alt, ok := postgresAlternates[query]; ok {
		return alt
	}
	return query
}
