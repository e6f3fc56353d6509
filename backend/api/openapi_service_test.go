package api_test

import (
	"bytes"
	"net/url"
	"testing"
)

// oaServiceScenarios cover the backup download and the about answer (backup.go).
func oaServiceScenarios() []oaCase {
	sqliteFile := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		if !bytes.HasPrefix(r.body, []byte("SQLite format 3\x00")) {
			t.Fatalf("the backup is not an SQLite file: %.40q", r.body)
		}
	}
	aboutFields := func(admin bool) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
			v := r.object(t)
			if v["version"] != "dev" || v["commit"] != "unknown" || v["buildDate"] != "unknown" || (v["dataDir"] != nil) != admin {
				t.Fatalf("about with admin=%v: %v", admin, v)
			}
		}
	}
	// On PostgreSQL the backup is pg_dump's job, and about names the database by its URL.
	namesPgDump := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		if !bytes.Contains(r.body, []byte("pg_dump")) {
			t.Fatalf("the backup's refusal does not name pg_dump: %s", r.body)
		}
	}
	aboutPostgres := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		v := r.object(t)
		db, _ := v["database"].(string)
		u, err := url.Parse(db)
		password, hasPassword := "", false
		if err == nil && u.User != nil {
			password, hasPassword = u.User.Password()
		}
		if v["dataDir"] != nil || err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" || hasPassword && password != "xxxxx" {
			t.Fatalf("about as admin on PostgreSQL: %v, want the database's URL without its password and no dataDir", v)
		}
	}
	meVia := func(via string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
			if v := r.object(t); v["via"] != via || v["user"] != nil || v["csrfToken"] != nil {
				t.Fatalf("me: %v, want via %s, no user, no csrfToken", v, via)
			}
		}
	}
	// The harness runs in team mode with the issuer http://id.agentdesk.test and no
	// provider name (TestSignInOptions covers the rest).
	signInWith := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		o, _ := r.object(t)["oidc"].(map[string]any)
		if o["name"] != "id.agentdesk.test" || o["loginUrl"] != "/login" {
			t.Fatalf("sign-in options: %v", r.object(t))
		}
	}
	listsLicenses := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		if !bytes.HasPrefix(r.body, []byte("# Third-party licenses\n")) || !bytes.Contains(r.body, []byte("| modernc.org/sqlite |")) {
			t.Fatalf("/licenses: %.80q", r.body)
		}
	}
	return []oaCase{
		{name: "third-party licenses", method: "GET", path: "/licenses", auth: "none", status: 200, check: listsLicenses},
		{name: "sign-in options", method: "GET", path: "/api/signin", auth: "none", status: 200, check: signInWith},
		{name: "backup", method: "GET", path: "/api/backup", auth: "desktop", status: 200, check: sqliteFile,
			postgres: &oaAnswer{status: 409, code: "conflict", check: namesPgDump}},
		{name: "backup by one project's admin", method: "GET", path: "/api/backup", auth: "admin", status: 403, code: "forbidden"},
		{name: "backup without admin", method: "GET", path: "/api/backup", auth: "all", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "backup no credentials", method: "GET", path: "/api/backup", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "about", method: "GET", path: "/api/about", auth: "ro", status: 200, check: aboutFields(false)},
		{name: "about as admin", method: "GET", path: "/api/about", auth: "admin", status: 200, check: aboutFields(true),
			postgres: &oaAnswer{status: 200, check: aboutPostgres}},
		{name: "about with a data token", method: "GET", path: "/api/about", auth: "data", status: 403, code: "forbidden"},
		{name: "about no credentials", method: "GET", path: "/api/about", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "me", method: "GET", path: "/api/me", auth: "ro", status: 200, check: meVia("token")},
		{name: "me on the desktop", method: "GET", path: "/api/me", auth: "desktop", status: 200, check: meVia("desktop")},
		{name: "me with a data token", method: "GET", path: "/api/me", auth: "data", status: 403, code: "forbidden"},
		{name: "me no credentials", method: "GET", path: "/api/me", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
	}
}
