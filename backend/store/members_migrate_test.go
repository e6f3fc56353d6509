package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"github.com/agentdesk/agentdesk/migrations"
)

// TestJoinOrderMigration: migration 00025 numbers the memberships that exist in the
// order they listed in before it (created_at, then the order they were written), and a
// membership made after it comes after them, on both engines.
func TestJoinOrderMigration(t *testing.T) { pgtest.Engines(t, testJoinOrderMigration) }

func testJoinOrderMigration(t *testing.T, engine string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentdesk.db")
	url := pgtest.DBFor(t, engine, nil) // a new empty database on PostgreSQL
	var db *sql.DB
	var err error
	if engine == "sqlite" {
		migrateTo(t, path, 24)
		db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	} else {
		db, err = sql.Open("pgx", url)
		if err == nil {
			var p *goose.Provider
			if p, err = goose.NewProvider(database.DialectPostgres, db, migrations.Postgres); err == nil {
				_, err = p.UpTo(ctx, 24)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	const early, later = "2025-06-01T08:00:00.000000Z", "2025-06-05T08:00:00.000000Z"
	member := func(project string, user int, at string) string {
		return fmt.Sprintf(`INSERT INTO project_members (project_id, user_id, role, created_at, updated_at)
			VALUES ('%s', %d, 'member', '%s', '%s')`, project, user, at, at)
	}
	// Each statement its own transaction, as the writes of a server.
	for _, q := range []string{
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES
			('prj_p', 'Work', 'default', 's', '` + early + `'), ('prj_q', 'Other', 'other', 's', '` + early + `')`,
		`INSERT INTO users (id, name, is_owner, created_at) VALUES (1, 'Owner', 1, '` + early + `'),
			(2, 'Dana', 0, '` + early + `'), (3, 'Erin', 0, '` + early + `')`,
		member("prj_q", 2, later), // dana joins q, then p, at the same moment
		member("prj_p", 2, later),
		member("prj_q", 1, later), // the owner joins q, then p at an earlier moment
		member("prj_p", 1, early),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	loc, err := ParseDB(url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenLocation(ctx, loc, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at, _ := time.Parse(time.RFC3339Nano, later)
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertMember(ctx, "prj_q", 3, "member", at) }); err != nil {
		t.Fatal(err)
	}

	r := s.Read()
	for user, want := range map[int64][]string{1: {"prj_p", "prj_q"}, 2: {"prj_q", "prj_p"}} {
		ms, err := r.Memberships(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.ProjectID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("user %d's memberships: %v, want %v", user, got, want)
		}
	}
	ms, err := r.Members(ctx, "prj_q")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, m := range ms {
		got = append(got, m.UserID)
	}
	if want := []int64{2, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("members of prj_q: %v, want %v (the order they joined, the new one last)", got, want)
	}
}
