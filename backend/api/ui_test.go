package api_test

import (
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/frontend"
)

// The web UI is served at / with an SPA fallback; hashed assets are cached for a year.
// Which half of the test runs depends on whether `make ui` built the UI into this
// binary: `make test` builds it first, so CI runs the built half.
func TestUIServing(t *testing.T) {
	env := testenv.Start(t)
	get := func(path, accept string) *testenv.Response {
		h := http.Header{}
		if accept != "" {
			h.Set("Accept", accept)
		}
		return env.Do(t, testenv.Request{Method: "GET", Path: path, Header: h})
	}
	html := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

	// Never the UI: the API, GraphQL, health, and other methods.
	if r := get("/api/nothing", html); r.Status != 404 || r.ErrorCode() != "not_found" {
		t.Fatalf("GET /api/nothing: %d %s", r.Status, r.Body)
	}
	if r := get("/healthz", html); r.Status != 200 || !strings.Contains(string(r.Body), `"ok"`) {
		t.Fatalf("GET /healthz: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, testenv.Request{Method: "POST", Path: "/board"}); r.Status != 404 {
		t.Fatalf("POST /board: %d, want 404", r.Status)
	}
	// Prometheus pointed at the main port learns where metrics are (--metrics-addr).
	for _, accept := range []string{"", "*/*", html} {
		if r := get("/metrics", accept); r.Status != 404 || !strings.Contains(string(r.Body), "--metrics-addr") {
			t.Fatalf("GET /metrics (Accept %q): %d %.100s; want 404 naming --metrics-addr", accept, r.Status, r.Body)
		}
	}
	if r := get("/assets/nope-123.js", "*/*"); r.Status != 404 {
		t.Fatalf("GET an unknown asset: %d, want 404", r.Status)
	}
	if r := get("/assets/../../go.mod", "*/*"); r.Status != 404 {
		t.Fatalf("GET /assets/../../go.mod: %d, want 404", r.Status)
	}

	if !frontend.Built() {
		r := get("/", html)
		if r.Status != 200 || !strings.Contains(string(r.Body), "make ui") ||
			!strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET / without a built UI: %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		return
	}

	index, err := fs.ReadFile(frontend.Assets(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/board", "/inbox", "/conversations/12", "/settings?x=1"} {
		r := get(path, html)
		if r.Status != 200 || string(r.Body) != string(index) {
			t.Fatalf("GET %s: %d, want index.html", path, r.Status)
		}
		if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Fatalf("GET %s: Content-Type %q", path, ct)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Fatalf("GET %s: Cache-Control %q, want no-cache", path, cc)
		}
	}
	// A script asking for JSON at a page path gets no HTML.
	if r := get("/board", "application/json"); r.Status != 404 {
		t.Fatalf("GET /board for JSON: %d, want 404", r.Status)
	}

	// Every asset index.html references is served with its type and a year of caching.
	refs := regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 2 {
		t.Fatalf("index.html references %d assets, want a script and a stylesheet", len(refs))
	}
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	for _, ref := range refs {
		r := get(ref[1], "*/*")
		if r.Status != 200 || len(r.Body) == 0 {
			t.Fatalf("GET %s: %d", ref[1], r.Status)
		}
		if want, ok := types[filepath.Ext(ref[1])]; ok && r.Header.Get("Content-Type") != want {
			t.Fatalf("GET %s: Content-Type %q, want %q", ref[1], r.Header.Get("Content-Type"), want)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Fatalf("GET %s: Cache-Control %q", ref[1], cc)
		}
	}
}

// GET /api/backup streams a consistent copy of the database to admins only, and the
// copy is a working agentdesk database: a server started on it has the same tasks.
func TestBackupDownload(t *testing.T) {
	env := testenv.Start(t)
	rw := env.Token(t, env.Project.ID, auth.TaskRead, auth.TaskWrite)
	admin := env.Token(t, env.Project.ID, auth.TaskRead, auth.Admin)
	for i := 0; i < 7; i++ {
		if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: rw, Body: map[string]any{"summary": "kept"}}); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}

	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/backup", Token: rw}); r.Status != 403 || r.ErrorCode() != "forbidden" ||
		!strings.Contains(string(r.Body), "admin") {
		t.Fatalf("backup without admin: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/backup"}); r.Status != 401 {
		t.Fatalf("backup without credentials: %d %s", r.Status, r.Body)
	}

	r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/backup", Token: admin})
	if r.Status != 200 {
		t.Fatalf("backup: %d %s", r.Status, r.Body)
	}
	want := `attachment; filename="agentdesk-` + time.Now().Format("2006-01-02") + `.db"`
	if cd := r.Header.Get("Content-Disposition"); cd != want {
		t.Fatalf("Content-Disposition %q, want %q", cd, want)
	}
	if !strings.HasPrefix(string(r.Body), "SQLite format 3\x00") {
		t.Fatalf("not an SQLite file: %.32q", r.Body)
	}
	// The temporary copy is gone from the data directory.
	entries, err := os.ReadDir(env.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".export-") {
			t.Fatalf("the temporary export %s was left in the data directory", e.Name())
		}
	}

	// Once the database holds another project, the export would carry that project's
	// data too: a project's admin token is refused, the desktop window's session is not.
	other := env.NewProject(t, "other team")
	env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: env.Token(t, other.ID, auth.TaskWrite), Body: map[string]any{"summary": "theirs"}})
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/backup", Token: admin}); r.Status != 403 || !strings.Contains(string(r.Body), "other projects") {
		t.Fatalf("backup by one project's admin while another project exists: %d %s", r.Status, r.Body)
	}
	sess, err := env.Service.StartDesktopSession(context.Background(), auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	if r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/backup", Token: sess.Token}); r.Status != 200 || !strings.HasPrefix(string(r.Body), "SQLite format 3\x00") {
		t.Fatalf("backup by the desktop window's session: %d %.200s", r.Status, r.Body)
	}

	// Restore: the file as the database of a new data directory; count its tasks.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agentdesk.db"), r.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Config{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("start a server on the backup: %v", err)
	}
	defer srv.Shutdown(context.Background())
	restored := &testenv.Env{URL: srv.URL(), Client: env.Client}
	var tasks []map[string]any
	list := restored.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks", Token: rw})
	if list.Status != 200 {
		t.Fatalf("list on the restored database: %d %s", list.Status, list.Body)
	}
	list.JSON(t, &tasks)
	if len(tasks) != 7 {
		t.Fatalf("the backup holds %d tasks, want 7", len(tasks))
	}
}
