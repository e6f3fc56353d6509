package store

import (
	"strconv"
	"strings"
	"sync"
)

// The store's SQL is written for SQLite. On PostgreSQL each statement text is rebound
// once (its parameters ? and ?N become $N) and the result cached by text. The few
// statements whose SQL differs have their PostgreSQL text beside the SQLite one:
// postgresSQL for a whole statement, postgresFragment for a piece that many statements
// share (a column, a condition); both are registered when the package initialises, so
// SQLite never looks at them. Statements built at run time test Reader.pg (the task
// filter's search, the knowledge base keyword search).

var (
	// postgresAlternates maps a SQLite statement text to its PostgreSQL text.
	postgresAlternates = map[string]string{}
	// postgresFragments are pieces of SQLite text and their PostgreSQL text, replaced in
	// every statement that holds them.
	postgresFragments [][2]string
)

// postgresSQL registers the PostgreSQL text of a statement and returns the SQLite one.
// Call it only in package-level variable declarations.
func postgresSQL(sqlite, postgres string) string {
	postgresAlternates[sqlite] = postgres
	return sqlite
}

// postgresFragment registers the PostgreSQL text of a piece of statements and returns
// the SQLite one. Call it only in package-level variable declarations.
func postgresFragment(sqlite, postgres string) string {
	postgresFragments = append(postgresFragments, [2]string{sqlite, postgres})
	return sqlite
}

// A JSON array of ids as a set: SQLite's json_each, PostgreSQL's jsonb elements.
var _ = postgresFragment(`SELECT value FROM json_each(`, `SELECT value::bigint FROM jsonb_array_elements_text(`)

// rebindCache maps a statement text to its PostgreSQL form. The store's texts are
// constants or built from a few variants, so the map stays small.
var rebindCache sync.Map

// postgresText is query as it runs on PostgreSQL, from the cache.
func postgresText(query string) string {
	if v, ok := rebindCache.Load(query); ok {
		return v.(string)
	}
	out, ok := postgresAlternates[query]
	if !ok {
		out = query
		for _, f := range postgresFragments {
			out = strings.ReplaceAll(out, f[0], f[1])
		}
	}
	out = rebind(out)
	rebindCache.Store(query, out)
	return out
}

// rebind turns SQLite's parameters into PostgreSQL's: ?N is $N, and a bare ? takes the
// number after the largest given so far (SQLite's rule, so "?2 ... ?" is $2 ... $3).
// String literals, quoted identifiers and comments are left alone.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	largest := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := closing(query, i+1, c)
			b.WriteString(query[i:end])
			i = end
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				end = len(query) - i - 2
			} else {
				end += 2
			}
			b.WriteString(query[i : i+2+end])
			i += 2 + end
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n := largest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(query[i+1 : j])
			}
			largest = max(largest, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closing is the index just past the quote that closes a literal opened before from
// (a doubled quote is an escaped one), or the end of the text.
func closing(s string, from int, quote byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == quote {
			if i+1 < len(s) && s[i+1] == quote {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}
