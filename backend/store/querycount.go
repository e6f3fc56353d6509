package store

// count notes one query run on the read pool.
func (r Reader) count() {
	if r.batch == nil && r.cache != nil {
		r.cache.queries.Add(1)
	}
}

// ReadQueries is how many queries have run on the read pool since the store opened.
// Tests use it to prove that a list costs a fixed number of queries, not one per row.
func (s *Store) ReadQueries() int64 { return s.readStmts.queries.Load() }
