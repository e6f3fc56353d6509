package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
)

// TestVectorSpaceVersionMigration: migration 00023 rebuilds vector_spaces with
// AUTOINCREMENT and the version column, keeping every space, id and reference; the
// sequence starts above the highest space id the database remembers (rows, events,
// activity); a deleted newest space's id is not given again, so that a space id never
// names another space (the vector cache relies on it); deleting a space still cascades;
// the Down migration keeps the rows and ids.
func TestVectorSpaceVersionMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentdesk.db")
	migrateTo(t, path, 22)
	const at = `'2026-01-01T00:00:00.000000Z'`
	db, err := sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('p', 'p', 'default', 's', ` + at + `)`,
		`INSERT INTO agents (id, project_id, name, created_at) VALUES (3, 'p', 'three', ` + at + `)`,
		`INSERT INTO vector_spaces (id, project_id, name, description, embedder, dimensions, document_count, chunk_count, created_at) VALUES
		   (2, 'p', 'two', 'd', '', 0, 0, 0, ` + at + `), (5, 'p', 'five', '', 'client', 3, 1, 2, ` + at + `)`,
		`INSERT INTO vector_documents (id, space_id, name, mime_type, size, chunks, created_at) VALUES (4, 5, 'doc', 'text/plain', 9, 2, ` + at + `)`,
		`INSERT INTO vector_chunks (id, space_id, document_id, seq, text, vector) VALUES (7, 5, 4, 0, 'blue sky', x'00'), (8, 5, 4, 1, 'green grass', x'00')`,
		`INSERT INTO vector_space_agents (space_id, agent_id, created_at) VALUES (5, 3, ` + at + `)`,
		// Space 9 was given out and deleted: the event log remembers it.
		`INSERT INTO events (project_id, seq, type, data, at, object_id) VALUES ('p', 1, 'vector.space.deleted', '{"id":9}', ` + at + `, '9')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := s.Read().VectorSpace(ctx, "p", 5)
	if err != nil || sp.Name != "five" || sp.Embedder != "client" || sp.Dimensions != 3 || sp.Documents != 1 || sp.Chunks != 2 ||
		sp.Version != 0 || len(sp.AgentIDs) != 1 || sp.AgentIDs[0] != 3 {
		t.Fatalf("space 5 after the migration: %+v %v", sp, err)
	}
	newSpace := func(name string) int64 {
		t.Helper()
		sp := &model.VectorSpace{ProjectID: "p", Name: name, CreatedAt: time.Now()}
		if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertVectorSpace(ctx, sp) }); err != nil {
			t.Fatal(err)
		}
		return sp.ID
	}
	if id := newSpace("ten"); id != 10 {
		t.Fatalf("the first space after the migration has id %d, want 10 (space 9 was given out before)", id)
	}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.DeleteVectorSpace(ctx, "p", 10) }); err != nil {
		t.Fatal(err)
	}
	if id := newSpace("eleven"); id != 11 {
		t.Fatalf("after deleting the newest space (10), the next has id %d, want 11", id)
	}
	// The references point at the rebuilt table: deleting space 5 takes its documents,
	// chunks and links along.
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.DeleteVectorSpace(ctx, "p", 5) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, db, "", map[string]int{
		`SELECT count(*) FROM vector_spaces WHERE id IN (2, 11)`:                                              2,
		`SELECT count(*) FROM vector_spaces WHERE id = 2 AND description = 'd'`:                               1,
		`SELECT count(*) FROM vector_documents`:                                                               0,
		`SELECT count(*) FROM vector_chunks`:                                                                  0,
		`SELECT count(*) FROM vector_space_agents`:                                                            0,
		`SELECT count(*) FROM pragma_foreign_key_check`:                                                       0,
		`SELECT count(*) FROM sqlite_schema WHERE name = 'vector_spaces' AND sql LIKE '%AUTOINCREMENT%'`:      1,
		`SELECT count(*) FROM sqlite_schema WHERE name LIKE 'vector_spaces\_%' ESCAPE '\' AND type = 'table'`: 0,
	})
	db.Close()

	migrateTo(t, path, 22)
	db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkCounts(t, db, "after the Down migration, ", map[string]int{
		`SELECT count(*) FROM vector_spaces WHERE id IN (2, 11)`:                                         2,
		`SELECT count(*) FROM pragma_table_info('vector_spaces') WHERE name = 'version'`:                 0,
		`SELECT count(*) FROM sqlite_schema WHERE name = 'vector_spaces' AND sql LIKE '%AUTOINCREMENT%'`: 0,
		`SELECT count(*) FROM pragma_foreign_key_check`:                                                  0,
	})
}
