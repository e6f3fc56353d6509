package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestCopyToPostgres fills a SQLite database through the service with every kind of row,
// copies it into PostgreSQL, and compares every table row by row (jsonb as JSON, bytea
// as bytes); then new rows get ids above every id SQLite gave (deleted ones included),
// and a second copy into the now full database is refused and changes nothing.
func TestCopyToPostgres(t *testing.T) {
	ctx := context.Background()
	path := copyFillEveryTable(t)
	url := pgtest.DB(t)

	var heard []string
	res, err := postgres.CopyFromSQLite(ctx, path, url, func(table string, rows int64, done bool) {
		if done {
			heard = append(heard, table)
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	lite := copyOpenSQLite(t, path)
	pg := copyOpenPG(t, url)
	tables := copyPGColumns(t, pg)
	if len(tables) < 30 {
		t.Fatalf("only %d PostgreSQL tables", len(tables))
	}
	copied := map[string]int64{}
	for _, tr := range res.Tables {
		copied[tr.Table] = tr.Rows
	}
	var total int64
	for table, cols := range tables {
		want := copyDump(t, lite, table, cols, false)
		got := copyDump(t, pg, table, cols, true)
		total += int64(len(got))
		if len(got) == 0 {
			t.Errorf("%s: no rows: the workload does not fill it, so its copy is not tested", table)
		}
		if copied[table] != int64(len(want)) {
			t.Errorf("%s: the result says %d rows copied, SQLite has %d", table, copied[table], len(want))
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s differs:\nSQLite     %s\nPostgreSQL %s", table, strings.Join(want, "\n           "), strings.Join(got, "\n           "))
		}
	}
	if res.Rows != total || len(res.Tables) != len(tables) || len(heard) != len(tables) {
		t.Errorf("result: %d rows in %d tables, progress heard %d tables; the database has %d rows in %d tables",
			res.Rows, len(res.Tables), len(heard), total, len(tables))
	}

	// The copy leaves statistics: a task list's plan needs them (TestPostgresListPlan).
	var stats int
	if err := pg.QueryRow(`SELECT count(*) FROM pg_stats WHERE schemaname = 'public' AND tablename = 'tasks' AND attname = 'project_id'`).Scan(&stats); err != nil || stats != 1 {
		t.Errorf("statistics of tasks.project_id after the copy: %d (%v), want them", stats, err)
	}

	// Ids: every identity's next value is above the highest id SQLite ever gave.
	seqs := map[string]int64{}
	rows, err := lite.Query(`SELECT name, seq FROM sqlite_sequence`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			t.Fatal(err)
		}
		seqs[name] = seq
	}
	rows.Close()
	var deletedTask int64
	if err := lite.QueryRow(`SELECT seq FROM sqlite_sequence WHERE name = 'tasks'`).Scan(&deletedTask); err != nil {
		t.Fatal(err)
	}
	var maxTask int64
	lite.QueryRow(`SELECT max(id) FROM tasks`).Scan(&maxTask)
	if deletedTask <= maxTask {
		t.Fatalf("the workload should delete the newest task (sqlite_sequence %d, max id %d)", deletedTask, maxTask)
	}
	for table, cols := range tables {
		if !slices.ContainsFunc(cols, func(c copyCol) bool { return c.name == "id" && c.identity }) {
			continue
		}
		var next, top int64
		if err := pg.QueryRow(`SELECT nextval(pg_get_serial_sequence($1, 'id'))`, table).Scan(&next); err != nil {
			t.Fatal(err)
		}
		lite.QueryRow(`SELECT coalesce(max(id), 0) FROM "` + table + `"`).Scan(&top)
		if next <= max(top, seqs[table]) {
			t.Errorf("%s: the next id is %d; SQLite gave up to %d (rows) and %d (sqlite_sequence)", table, next, top, seqs[table])
		}
	}
	var project string
	lite.QueryRow(`SELECT id FROM projects ORDER BY created_at LIMIT 1`).Scan(&project)
	var newTask int64
	if err := pg.QueryRow(`INSERT INTO tasks (project_id, summary, status, source, task_type, created_at, updated_at)
		VALUES ($1, 'after', 'Todo', 'api', 'task', 'now', 'now') RETURNING id`, project).Scan(&newTask); err != nil {
		t.Fatal(err)
	}
	if newTask <= deletedTask {
		t.Errorf("a task inserted after the copy got id %d: the deleted task %d's id is given again", newTask, deletedTask)
	}
	// The triggers are back on: the new task is counted.
	var todo, wasTodo int64
	pg.QueryRow(`SELECT n FROM task_counts WHERE project_id = $1 AND status = 'Todo'`, project).Scan(&todo)
	lite.QueryRow(`SELECT coalesce((SELECT n FROM task_counts WHERE project_id = $1 AND status = 'Todo'), 0)`, project).Scan(&wasTodo)
	if todo != wasTodo+1 {
		t.Errorf("task_counts Todo after an insert: %d, want %d: the triggers were not enabled again", todo, wasTodo+1)
	}

	// Memberships: a new one's join_order, computed by the store's insert, comes after
	// the copied ones.
	var second string
	var dana, topJoin int64
	lite.QueryRow(`SELECT id FROM projects WHERE name = 'Second'`).Scan(&second)
	lite.QueryRow(`SELECT id FROM users WHERE email = 'dana@example.com'`).Scan(&dana)
	lite.QueryRow(`SELECT max(join_order) FROM project_members`).Scan(&topJoin)
	loc, err := store.ParseDB(url)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := store.OpenLocation(ctx, loc, "", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = ps.Write(ctx, store.Author{}, func(tx *store.Tx) error { return tx.InsertMember(ctx, second, dana, model.RoleViewer, time.Now()) })
	ps.Close()
	if err != nil {
		t.Fatal(err)
	}
	var joinOrder int64
	if err := pg.QueryRow(`SELECT join_order FROM project_members WHERE project_id = $1 AND user_id = $2`, second, dana).Scan(&joinOrder); err != nil {
		t.Fatal(err)
	}
	if topJoin < 3 || joinOrder <= topJoin {
		t.Errorf("a membership made after the copy has join_order %d; SQLite's went up to %d", joinOrder, topJoin)
	}

	// A second copy into the same database is refused and leaves it as it was.
	before := copyDumpAll(t, pg, tables)
	_, err = postgres.CopyFromSQLite(ctx, path, url, nil)
	if !errors.Is(err, postgres.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "already holds agentdesk data") {
		t.Fatalf("copy into a full database: %v, want ErrTargetNotEmpty", err)
	}
	if after := copyDumpAll(t, pg, tables); !slices.Equal(before, after) {
		t.Error("the refused copy changed the target")
	}
}

// TestCopyToPostgresFailureLeavesNothing: a copy that fails midway (its context ends
// after the first tables; a row PostgreSQL refuses) leaves no row in the target, and a
// later run then copies everything into the schema the first one made.
func TestCopyToPostgresFailureLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := copyFillEveryTable(t)
	url := pgtest.DB(t)
	done := 0
	_, err := postgres.CopyFromSQLite(ctx, path, url, func(table string, rows int64, last bool) {
		if last {
			if done++; done == 5 {
				cancel()
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("copy cancelled midway: %v, want context.Canceled", err)
	}
	if done != 5 {
		t.Fatalf("%d tables done before the error, want 5", done)
	}
	pg := copyOpenPG(t, url)
	tables := copyPGColumns(t, pg)
	empty := func(when string) {
		t.Helper()
		for table := range tables {
			var n int64
			if err := pg.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s has %d rows after %s", table, n, when)
			}
		}
	}
	empty("a cancelled copy")

	// A row PostgreSQL cannot take (SQLite's loose typing let it in): the error names it.
	lite := copyOpenSQLite(t, path)
	if _, err := lite.Exec(`UPDATE tasks SET steps = '[{"title": "a"' WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.CopyFromSQLite(context.Background(), path, url, nil)
	if err == nil || !strings.Contains(err.Error(), "tasks.steps, row id 2") {
		t.Fatalf("a task whose steps are not JSON: %v", err)
	}
	t.Log(err)
	empty("a copy that met a bad row")
	if _, err := lite.Exec(`UPDATE tasks SET steps = '[]' WHERE id = 2`); err != nil {
		t.Fatal(err)
	}

	res, err := postgres.CopyFromSQLite(context.Background(), path, url, nil)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if res.Rows < 50 {
		t.Errorf("second run copied %d rows", res.Rows)
	}
}

// TestCopyToPostgresRefuses: the SQLite database must be at this agentdesk's schema, and
// the target a postgres:// URL of a database without other tables; each refusal leaves
// the target as it was.
func TestCopyToPostgresRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "agentdesk.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	url := pgtest.DB(t)
	pg := copyOpenPG(t, url)
	// Another application's tables, even empty, and its own goose record.
	if _, err := pg.Exec(`CREATE TABLE accounts (id int);
		CREATE TABLE goose_db_version (id serial PRIMARY KEY, version_id bigint NOT NULL, is_applied boolean NOT NULL, tstamp timestamp DEFAULT now());
		INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, true), (3, true)`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.CopyFromSQLite(ctx, path, url, nil)
	if !errors.Is(err, postgres.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "accounts") {
		t.Errorf("a database with another application's table: %v, want ErrTargetNotEmpty naming it", err)
	}
	var n int
	pg.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n)
	if n != 2 {
		t.Errorf("the refused target has %d tables, want its 2", n)
	}

	if _, err := postgres.CopyFromSQLite(ctx, path, "mysql://u:p@h/db", nil); err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Errorf("a mysql:// target: %v", err)
	}
	if _, err := postgres.CopyFromSQLite(ctx, filepath.Join(dir, "none.db"), url, nil); err == nil || !strings.Contains(err.Error(), "no agentdesk database") {
		t.Errorf("no SQLite database: %v", err)
	}

	// Older and newer schemas, by goose's own record of them.
	lite := copyOpenSQLite(t, path)
	known := sqlite.KnownSchema()
	if _, err := lite.Exec(`DELETE FROM goose_db_version WHERE version_id = $1`, known); err != nil {
		t.Fatal(err)
	}
	var older *postgres.OlderSchemaError
	if _, err := postgres.CopyFromSQLite(ctx, path, url, nil); !errors.As(err, &older) || !strings.Contains(err.Error(), "start this agentdesk once") {
		t.Errorf("an older SQLite schema: %v", err)
	}
	if _, err := lite.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, 1), ($2, 1)`, known, known+1); err != nil {
		t.Fatal(err)
	}
	var newer *sqlite.NewerSchemaError
	if _, err := postgres.CopyFromSQLite(ctx, path, url, nil); !errors.As(err, &newer) {
		t.Errorf("a newer SQLite schema: %v", err)
	}
}

// copyFillEveryTable makes a SQLite database with rows in every table, through the service,
// and returns its path, closed. The newest task is deleted, so that sqlite_sequence is
// above the highest task id.
func copyFillEveryTable(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentdesk.db")
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, service.Options{WebhooksAllowPrivate: true}) // the webhook receiver is on loopback
	defer func() {
		svc.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := svc.Projects(ctx, auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	owner := auth.Owner(ps[0].ID)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	str := func(v string) *string { return &v }
	intp := func(v int) *int { return &v }

	_, err = svc.CreateProject(ctx, owner, "Second", "second")
	must("CreateProject", err)
	agent, err := svc.CreateAgent(ctx, owner, "builder")
	must("CreateAgent", err)
	_, err = svc.UpdateAgent(ctx, owner, agent.ID, service.UpdateAgentInput{DisplayName: str("Builder"), Description: str("builds")})
	must("UpdateAgent", err)
	skill, err := svc.CreateSkill(ctx, owner, "go", "writes Go")
	must("CreateSkill", err)
	_, _, err = svc.SetAgentSkill(ctx, owner, agent.ID, skill.ID, true)
	must("SetAgentSkill", err)
	ci, _, err := svc.CreateToken(ctx, owner, service.CreateTokenInput{Name: "ci", Type: "platform", Scopes: []string{auth.TaskRead, auth.TaskWrite}})
	must("CreateToken", err)
	ciToken, err := svc.AuthenticateToken(ctx, ci)
	must("AuthenticateToken", err)
	_, err = svc.StartTokenSession(ctx, ciToken, "test", "192.0.2.1")
	must("StartTokenSession", err)
	_, gone, err := svc.CreateToken(ctx, owner, service.CreateTokenInput{Name: "revoked", Type: "platform", Scopes: []string{auth.TaskRead}})
	must("CreateToken", err)
	must("RevokeToken", svc.RevokeToken(ctx, owner, gone.ID)) // counted in credential_changes

	conv, err := svc.CreateConversation(ctx, owner, service.CreateConversationInput{Name: str("design"), Message: str("hello, 世界")}, "")
	must("CreateConversation", err)
	ref := fmt.Sprint(conv.ID)
	msg, err := svc.PostMessage(ctx, owner, ref, service.PostMessageInput{Message: str("second, @builder")}, "key-1") // fills message_mentions
	must("PostMessage", err)
	_, err = svc.AddReaction(ctx, owner, msg.ID, "👍")
	must("AddReaction", err)
	binary := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff, 0xfe}
	_, err = svc.ShareDocument(ctx, owner, ref, service.DocumentUpload{Name: "logo.png", MimeType: "image/png", Body: bytes.NewReader(binary)})
	must("ShareDocument", err)

	var tasks []int64
	for i := range 4 {
		tk, err := svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: fmt.Sprintf("Deploy invoicing %d", i), Details: "d",
			Steps: []service.StepInput{{Title: "build"}, {Title: "ship \"it\""}}, AgentID: &agent.ID, RequiredSkills: []string{"go"},
			ConversationID: model.Ref(ref)}, "")
		must("CreateTask", err)
		tasks = append(tasks, tk.ID)
	}
	_, err = svc.SetStepStatus(ctx, owner, tasks[0], 0, "completed", nil)
	must("SetStepStatus", err)
	_, err = svc.SetTaskStatus(ctx, owner, tasks[0], "Waiting", str("which region?"), nil, nil)
	must("Waiting", err)
	_, err = svc.Respond(ctx, owner, tasks[0], service.RespondInput{Response: "eu-west"}, "", nil)
	must("Respond", err)
	// The agent reports, with usage.
	ap := auth.Agent(owner.ProjectID, agent.ID, agent.Name)
	_, err = svc.AgentCallback(ctx, ap, tasks[1], service.CallbackInput{Status: "Done", Message: "shipped",
		Steps: []service.StepUpdate{{Index: intp(1), Status: "skipped"}},
		Usage: &service.UsageInput{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0123, Model: "m-1"}}, "cb-1", nil)
	must("AgentCallback", err)

	kb := svc.Knowledge()
	space, err := kb.CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: str("handbook"), Description: str("how we work")})
	must("CreateSpace", err)
	_, err = kb.AddDocument(ctx, owner, space.ID, service.AddVectorDocumentInput{Name: str("deploys.md"), Text: str("Deploys go out on Tuesdays.\n\nRollbacks need two people.")})
	must("AddDocument", err)
	_, err = kb.LinkSpace(ctx, owner, space.ID, agent.ID)
	must("LinkSpace", err)

	job, err := svc.CreateJob(ctx, owner, service.JobInput{Name: str("nightly"), Cron: str("0 3 * * *"), Summary: str("Nightly build"),
		Steps: &[]string{"build", "test"}})
	must("CreateJob", err)
	_, err = svc.RunJobNow(ctx, owner, job.ID)
	must("RunJobNow", err)

	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer receiver.Close()
	hook, err := svc.CreateWebhook(ctx, owner, service.WebhookInput{URL: str(receiver.URL), Events: &[]string{"task.created"}})
	must("CreateWebhook", err)
	_, err = svc.TestWebhook(ctx, owner, hook.ID)
	must("TestWebhook", err)
	_, err = svc.DeliverWebhook(ctx, hook.ID)
	must("DeliverWebhook", err)

	// A2A: a remote agent (its card on loopback) with a task sent to it, and a push config.
	card := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"name":"Remote","description":"d","url":"http://` + r.Host + `/rpc","protocolVersion":"0.3.0","version":"1",` +
			`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`))
	}))
	defer card.Close()
	remote, err := svc.RegisterRemoteAgent(ctx, owner, service.RemoteAgentInput{Name: "remote", CardURL: card.URL, CredentialKind: "bearer", Credential: "k"})
	must("RegisterRemoteAgent", err)
	_, err = svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "For the remote agent", AgentID: &remote.Agent.ID}, "")
	must("CreateTask (remote)", err)
	pushed, err := svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "Pushed", AgentID: &agent.ID}, "")
	must("CreateTask (pushed)", err)
	_, err = svc.SetA2APushConfig(ctx, owner, agent.Name, pushed.ID, service.A2APushConfig{URL: receiver.URL, Token: "t"})
	must("SetA2APushConfig", err)

	_, err = svc.AddMember(ctx, owner, service.AddMemberInput{Name: "Dana", Email: "dana@example.com", Role: "member"})
	must("AddMember", err)
	// Email to the person asked (mail_cursors, mail_outbox, mail_links): a question,
	// queued and sent through a sender that takes every message.
	_, err = svc.SetTaskStatus(ctx, owner, tasks[2], "Waiting", str("ship on Friday?"), nil, nil)
	must("Waiting (emailed)", err)
	must("QueueQuestionMail", svc.QueueQuestionMail(ctx))
	due, err := svc.DueMail(ctx)
	must("DueMail", err)
	for _, id := range due {
		must("DeliverMail", svc.DeliverMail(ctx, id, takesAll{}, "http://127.0.0.1:8080"))
	}
	_, err = svc.SignIn(ctx, service.Identity{Issuer: "https://id.example.com", Subject: "dana", Email: "dana@example.com", EmailVerified: true, Name: "Dana",
		UserAgent: "test", Address: "192.0.2.1"})
	must("SignIn", err)
	must("BeginLogin", svc.BeginLogin(ctx, "", "state-1", "nonce-1", "verifier-1"))

	usd := 10.0
	_, err = svc.SetBudget(ctx, owner, &usd)
	must("SetBudget", err)
	must("IndexActivity", svc.IndexActivity(ctx))
	must("FlushTokenUse", svc.FlushTokenUse(ctx))
	// The newest task goes: its id is never given again.
	tk, err := svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "Temporary"}, "")
	must("CreateTask", err)
	must("DeleteTask", svc.DeleteTask(ctx, owner, tk.ID, nil))
	return path
}

type copyCol struct {
	name, typ string
	identity  bool
}

// copyPGColumns: the PostgreSQL tables (goose's aside) and their columns.
func copyPGColumns(t *testing.T, pg *sql.DB) map[string][]copyCol {
	t.Helper()
	rows, err := pg.Query(`SELECT table_name, column_name, data_type, is_identity = 'YES' FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name <> 'goose_db_version' ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]copyCol{}
	for rows.Next() {
		var table string
		var c copyCol
		if err := rows.Scan(&table, &c.name, &c.typ, &c.identity); err != nil {
			t.Fatal(err)
		}
		out[table] = append(out[table], c)
	}
	return out
}

// copyDump reads a table as sorted lines, each value normalised by its PostgreSQL type:
// integers as numbers, text quoted, bytes in hex, JSON re-encoded (keys sorted).
func copyDump(t *testing.T, db *sql.DB, table string, cols []copyCol, pg bool) []string {
	t.Helper()
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = `"` + c.name + `"`
		if pg && c.typ == "jsonb" {
			sel[i] += "::text"
		}
	}
	rows, err := db.Query(`SELECT ` + strings.Join(sel, ", ") + ` FROM "` + table + `"`)
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		line := make([]string, len(cols))
		for i, c := range cols {
			line[i] = copyNormalise(t, vals[i], c.typ)
		}
		out = append(out, strings.Join(line, " | "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func copyDumpAll(t *testing.T, db *sql.DB, tables map[string][]copyCol) []string {
	var out []string
	for table, cols := range tables {
		for _, line := range copyDump(t, db, table, cols, true) {
			out = append(out, table+": "+line)
		}
	}
	slices.Sort(out)
	return out
}

func copyNormalise(t *testing.T, v any, typ string) string {
	t.Helper()
	if v == nil {
		return "NULL"
	}
	asString := func() string {
		switch x := v.(type) {
		case string:
			return x
		case []byte:
			return string(x)
		}
		t.Fatalf("%v (%T) for a %s column", v, v, typ)
		return ""
	}
	switch typ {
	case "bigint":
		if n, ok := v.(int64); ok {
			return strconv.FormatInt(n, 10)
		}
	case "text":
		return strconv.Quote(asString())
	case "bytea":
		return "x" + hex.EncodeToString([]byte(asString()))
	case "jsonb":
		d := json.NewDecoder(strings.NewReader(asString()))
		d.UseNumber()
		var j any
		if err := d.Decode(&j); err != nil {
			t.Fatalf("%q: %v", asString(), err)
		}
		b, _ := json.Marshal(j)
		return string(b)
	}
	t.Fatalf("%v (%T) for a %s column", v, v, typ)
	return ""
}

func copyOpenSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func copyOpenPG(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCopyToPostgresReadsOneSnapshot: the copy runs beside a server that keeps writing
// (a task created after the first table is copied); what it copies is the database as
// it was when the copy began: the new task is not there, and the counts, event seqs and
// events agree with each other.
func TestCopyToPostgresReadsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	s := serve(t, t.TempDir())
	owner := auth.Owner(s.project)
	for i := range 3 {
		if _, err := s.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: fmt.Sprint("before ", i)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	url := pgtest.DB(t)
	wrote := false
	_, err := postgres.CopyFromSQLite(ctx, s.Service.Store().Path(), url, func(table string, rows int64, done bool) {
		if done && !wrote {
			wrote = true
			if _, err := s.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "during"}, ""); err != nil {
				t.Errorf("a write during the copy: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	pg := copyOpenPG(t, url)
	var tasks, counted, events, lastSeq, eventSeq int64
	pg.QueryRow(`SELECT count(*) FROM tasks`).Scan(&tasks)
	pg.QueryRow(`SELECT coalesce(sum(n), 0) FROM task_counts`).Scan(&counted)
	pg.QueryRow(`SELECT count(*), coalesce(max(seq), 0) FROM events WHERE project_id = $1`, s.project).Scan(&events, &lastSeq)
	pg.QueryRow(`SELECT event_seq FROM projects WHERE id = $1`, s.project).Scan(&eventSeq)
	if tasks != 3 || counted != 3 {
		t.Errorf("copied %d tasks, counted %d; want the 3 of the snapshot", tasks, counted)
	}
	if lastSeq != eventSeq || events != eventSeq {
		t.Errorf("events: %d, the last seq %d, the project's event_seq %d: not one snapshot", events, lastSeq, eventSeq)
	}
	lite := copyOpenSQLite(t, s.Service.Store().Path())
	var now int64
	lite.QueryRow(`SELECT count(*) FROM tasks`).Scan(&now)
	if now != 4 {
		t.Errorf("SQLite has %d tasks, want 4: the write during the copy did not happen", now)
	}
}

// takesAll is a mail server that takes every message (copyFillEveryTable's emails).
type takesAll struct{}

func (takesAll) Send(context.Context, mail.Message) error { return nil }
