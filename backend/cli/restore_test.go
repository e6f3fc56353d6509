package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/fsstate"
)

// cli runs the command line in this process.
func cli(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = Main(args, &out, &errOut, nil)
	return out.String(), errOut.String(), code
}

// tables is every row of every table of the database at path (read only), each row one
// line of its columns' SQL values, sorted; goose's table and the full-text index's
// shadow tables are left out.
func tables(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	strs := func(q string, args ...any) []string {
		t.Helper()
		rows, err := db.Query(q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	out := map[string][]string{}
	for _, name := range strs(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name != 'goose_db_version' AND name NOT LIKE 'vector_chunks_fts%'`) {
		var cols []string
		for _, c := range strs(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, name) {
			cols = append(cols, fmt.Sprintf("'%s=' || quote(%q)", c, c))
		}
		rows := strs(`SELECT ` + strings.Join(cols, " || ' ' || ") + ` FROM "` + name + `"`)
		slices.Sort(rows)
		out[name] = rows
	}
	return out
}

// TestRestoreDrill: a backup taken under load (GET /api/backup while 8 clients create
// tasks and post messages) restores into a new directory: the restored database is the
// backup, table for table and row for row; every create acknowledged before the backup
// began is in it, and every row in it is the source's; a server started on it serves
// them. Restoring over a database in use is refused, naming the server; restoring over
// one that was not closed cleanly keeps it whole (its WAL's commits included) beside the
// new one; bad backups are refused and change nothing.
func TestRestoreDrill(t *testing.T) {
	ctx := context.Background()
	src := testenv.Start(t)
	token, _, err := src.Service.CreateToken(ctx, auth.Owner(src.Project.ID), service.CreateTokenInput{Name: "drill",
		Scopes: []string{auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite, auth.Admin}})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	post := func(path, body string) (int64, error) {
		req, _ := http.NewRequest("POST", src.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return 0, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
		}
		var v struct{ ID int64 }
		if err := json.Unmarshal(raw, &v); err != nil {
			return 0, err
		}
		return v.ID, nil
	}

	// The load: 8 clients, each creating tasks with steps and posting messages to its
	// conversation, until stopped. A create acknowledged before backupBegan is set must
	// be in the backup.
	var backupBegan, stop atomic.Bool
	var mu sync.Mutex
	var before, after []string // "task 12", "message 40"
	var wg sync.WaitGroup
	var loadErr atomic.Pointer[error]
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(err error) { loadErr.CompareAndSwap(nil, &err) }
			conv, err := post("/api/projects/"+src.Project.ID+"/conversations", fmt.Sprintf(`{"message": "client %d here", "name": "c%d"}`, g, g))
			if err != nil {
				fail(err)
				return
			}
			for i := 0; !stop.Load(); i++ {
				var what string
				if i%3 == 2 {
					id, err := post(fmt.Sprintf("/api/projects/%s/conversations/%d/messages", src.Project.ID, conv), fmt.Sprintf(`{"message": "m %d.%d"}`, g, i))
					if err != nil {
						fail(err)
						return
					}
					what = fmt.Sprintf("message %d", id)
				} else {
					id, err := post("/api/tasks", fmt.Sprintf(`{"summary": "t %d.%d", "steps": [{"title": "a"}, {"title": "b"}]}`, g, i))
					if err != nil {
						fail(err)
						return
					}
					what = fmt.Sprintf("task %d", id)
				}
				// Acknowledged before the backup began only if the answer came before.
				began := backupBegan.Load()
				mu.Lock()
				if began {
					after = append(after, what)
				} else {
					before = append(before, what)
				}
				mu.Unlock()
			}
		}()
	}
	// Some load first, then the backup while it goes on.
	for deadline := time.Now().Add(30 * time.Second); ; {
		mu.Lock()
		n := len(before)
		mu.Unlock()
		if n >= 300 || loadErr.Load() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d creates in 30 s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	backupBegan.Store(true)
	req, _ := http.NewRequest("GET", src.URL+"/api/backup", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.Create(backup)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("backup: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	f.Close()
	for { // and more load after it
		mu.Lock()
		n := len(after)
		mu.Unlock()
		if n >= 100 || loadErr.Load() != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if p := loadErr.Load(); p != nil {
		t.Fatalf("load: %v", *p)
	}

	// Restore into a new directory.
	dir := filepath.Join(t.TempDir(), "restored")
	out, errOut, code := cli("restore", "--from", backup, "--data", dir)
	if code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	var res sqlite.RestoreResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("restore printed %q: %v", out, err)
	}
	db := server.DBPath(dir)
	if res.Database != db || res.From != backup || res.Replaced != nil || res.SchemaVersion != sqlite.KnownSchema() || res.Bytes <= 0 {
		t.Fatalf("restore result %+v", res)
	}
	if st, err := os.Stat(db); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("restored database: %v %v, want mode 0600", st, err)
	}

	// The restored database is the backup, every table.
	restored, fromBackup := tables(t, db), tables(t, backup)
	if !maps.EqualFunc(restored, fromBackup, slices.Equal) {
		t.Fatal("the restored database differs from the backup")
	}
	// Every create acknowledged before the backup began is there.
	present := map[string]bool{}
	for _, row := range restored["tasks"] {
		present["task "+strings.TrimPrefix(strings.Fields(row)[0], "id=")] = true
	}
	for _, row := range restored["messages"] {
		present["message "+strings.TrimPrefix(strings.Fields(row)[0], "id=")] = true
	}
	missing := 0
	for _, w := range before {
		if !present[w] {
			missing++
			t.Errorf("%s, acknowledged before the backup began, is not in it", w)
		}
	}
	t.Logf("%d creates acknowledged before the backup began, %d after; the backup holds %d tasks and %d messages; %d missing",
		len(before), len(after), len(restored["tasks"]), len(restored["messages"]), missing)
	// And every row of it is the source's (the load only adds rows; rows that change
	// under it are left out: the projects' event counters, the tokens' last use, the
	// agents' last contact, the tasks per status, the read markers (each message posted
	// moves its poster's), and what is filled in the background: the activity trail and
	// the search index, whose FTS5 tables merge their segments).
	source := tables(t, server.DBPath(src.DataDir))
	changing := []string{"projects", "tokens", "agents", "task_counts", "conversation_reads", "activity", "sqlite_sequence"}
	for name, rows := range restored {
		if slices.Contains(changing, name) || strings.HasPrefix(name, "tasks_fts") {
			continue
		}
		have := map[string]bool{}
		for _, r := range source[name] {
			have[r] = true
		}
		for _, r := range rows {
			if !have[r] {
				t.Errorf("table %s: the backup's row %s is not the source's", name, r)
				break
			}
		}
	}

	// A server on the restored directory serves it.
	s2, err := server.Start(ctx, server.Config{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest("GET", s2.URL()+"/api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var listed []struct{ ID int64 }
	json.NewDecoder(resp.Body).Decode(&listed)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(listed) != len(restored["tasks"]) {
		t.Fatalf("the restored server lists %d tasks (status %d), want %d", len(listed), resp.StatusCode, len(restored["tasks"]))
	}
	if _, err := s2.Service.CreateTask(ctx, auth.Owner(src.Project.ID), service.CreateTaskInput{Summary: "after the restore"}, ""); err != nil {
		t.Fatal(err)
	}

	shutdown, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s2.Shutdown(shutdown); err != nil {
		t.Fatal(err)
	}

	// While a server holds the directory, restore refuses, naming it, and changes nothing.
	// (The lock stands for the server: a live one's background work would change the
	// files by itself.)
	lock, err := server.LockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	lock.Note(s2.URL())
	state := fsstate.Dir(t, dir)
	_, errOut, code = cli("restore", "--from", backup, "--data", dir)
	if code != 1 || !strings.Contains(errOut, s2.URL()) || !strings.Contains(errOut, "stop it first") {
		t.Errorf("restore beside a running server: exit %d, %q; want 1 naming %s", code, errOut, s2.URL())
	}
	if !maps.Equal(state, fsstate.Dir(t, dir)) {
		t.Error("the refused restore changed the data directory")
	}
	lock.Release()

	// A database not closed cleanly: commits in its WAL only (a copy of the files taken
	// while a connection holds them, as a kill -9 leaves them). Restoring over it keeps
	// it, those commits included, and leaves no WAL of it for the new file.
	crashed := filepath.Join(t.TempDir(), "crashed")
	os.Mkdir(crashed, 0o700)
	live, err := sql.Open("sqlite", "file:"+db+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Exec(`UPDATE projects SET name = 'only in the WAL'`); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"agentdesk.db", "agentdesk.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "agentdesk.db-wal" && len(b) == 0 {
			t.Fatal("the WAL is empty")
		}
		if err := os.WriteFile(filepath.Join(crashed, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	live.Close()
	out, errOut, code = cli("restore", "--from", backup, "--data", crashed)
	if code != 0 {
		t.Fatalf("restore over a crashed database: exit %d: %s", code, errOut)
	}
	res = sqlite.RestoreResult{}
	json.Unmarshal([]byte(out), &res)
	if res.Replaced == nil || !strings.HasPrefix(filepath.Base(*res.Replaced), "agentdesk.db.replaced-") {
		t.Fatalf("restore result %+v, want the replaced database kept", res)
	}
	if st, err := os.Stat(*res.Replaced); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kept database: %v %v, want mode 0600", st, err)
	}
	for _, name := range []string{"agentdesk.db-wal", "agentdesk.db-shm", "agentdesk.db.restoring"} {
		if _, err := os.Stat(filepath.Join(crashed, name)); err == nil {
			t.Errorf("%s is left after the restore", name)
		}
	}
	if kept := tables(t, *res.Replaced); !strings.Contains(strings.Join(kept["projects"], "\n"), "'only in the WAL'") {
		t.Errorf("the kept database lost the commit that was only in its WAL: %q", kept["projects"])
	}
	if !maps.EqualFunc(tables(t, server.DBPath(crashed)), fromBackup, slices.Equal) {
		t.Error("the database restored over a crashed one differs from the backup")
	}

	// Bad backups: refused with a reason, the data directory unchanged.
	bad := t.TempDir()
	raw, _ := os.ReadFile(backup)
	damaged := bytes.Clone(raw)
	for i := 4096 * 3; i < 4096*3+2000 && i < len(damaged); i++ {
		damaged[i] ^= 0x5a
	}
	os.WriteFile(filepath.Join(bad, "damaged.db"), damaged, 0o600)
	os.WriteFile(filepath.Join(bad, "text.db"), []byte("not a database at all, just some text that is long enough to look like a file"), 0o600)
	other, _ := sql.Open("sqlite", filepath.Join(bad, "other.db"))
	other.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`)
	other.Close()
	newer := filepath.Join(bad, "newer.db")
	os.WriteFile(newer, raw, 0o600)
	nd, _ := sql.Open("sqlite", newer)
	if _, err := nd.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)`, sqlite.KnownSchema()+1); err != nil {
		t.Fatal(err)
	}
	nd.Close()
	// Code in the database runs on every write: a backup brings agentdesk's triggers and
	// views only, word for word. A trigger that un-revokes tokens, a view, and one of
	// agentdesk's own triggers with another body are refused.
	for file, stmts := range map[string][]string{
		"trigger.db": {`CREATE TRIGGER tokens_unrevoke AFTER UPDATE OF revoked_at ON tokens BEGIN UPDATE tokens SET revoked_at = NULL WHERE id = NEW.id; END`},
		"view.db":    {`CREATE VIEW secrets AS SELECT id, secret FROM projects`},
		"altered.db": {`DROP TRIGGER tokens_update_counted`, `CREATE TRIGGER tokens_update_counted AFTER UPDATE ON tokens BEGIN SELECT 1; END`},
	} {
		path := filepath.Join(bad, file)
		os.WriteFile(path, raw, 0o600)
		db, _ := sql.Open("sqlite", path)
		for _, stmt := range stmts {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		db.Close()
	}
	state = fsstate.Dir(t, crashed)
	for file, says := range map[string]string{
		"damaged.db": "damaged",
		"text.db":    "not a SQLite database",
		"other.db":   "not an agentdesk one",
		"newer.db":   "written by a newer agentdesk",
		"missing.db": "no such file",
		"trigger.db": `holds a trigger "tokens_unrevoke" that agentdesk's schema does not have`,
		"view.db":    `holds a view "secrets" that agentdesk's schema does not have`,
		"altered.db": `holds a trigger "tokens_update_counted" that agentdesk's schema does not have`,
	} {
		_, errOut, code := cli("restore", "--from", filepath.Join(bad, file), "--data", crashed)
		if code != 1 || !strings.Contains(errOut, says) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("restore from %s: exit %d, %q; want 1 and one line saying %q", file, code, errOut, says)
		}
		if !maps.Equal(state, fsstate.Dir(t, crashed)) {
			t.Fatalf("the refused restore from %s changed the data directory", file)
		}
	}
}

// TestRestoreIsToldOneWay: every place that tells a person how to restore a backup (the
// README, the operations page, the Settings screen, the backup endpoint's description)
// names `agentdesk restore --from`, which checks the file, keeps the replaced database and
// drops its stale WAL; none says to copy the file over agentdesk.db by hand.
func TestRestoreIsToldOneWay(t *testing.T) {
	for _, path := range []string{"README.md", "docs/operations.md", "frontend/src/screens/Settings.svelte", "backend/api/openapi.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		if text := string(b); !strings.Contains(text, "agentdesk restore --from") || strings.Contains(text, "put the file back") {
			t.Errorf("%s does not tell to restore with `agentdesk restore --from FILE`", path)
		}
	}
}
