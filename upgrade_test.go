package main

import (
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	_ "modernc.org/sqlite"
)

// TestUpgradeFrom020: a database written by agentdesk 0.2.0 (the end of round 2, schema
// 00027; testdata/upgrade/make-0.2.0-db.sh made it with that commit's binary) is opened
// by this binary as it is: the server migrates it to the newest schema, its token still
// signs in, and its tasks, steps, question and conversation are all there and writable.
func TestUpgradeFrom020(t *testing.T) {
	data := t.TempDir()
	path := filepath.Join(data, "agentdesk.db")
	unzip(t, "testdata/upgrade/agentdesk-0.2.0.db.gz", path)
	if v := schemaVersion(t, path); v != 27 {
		t.Fatalf("the 0.2.0 database is at schema %d, want 27", v)
	}
	raw, err := os.ReadFile("testdata/upgrade/agentdesk-0.2.0.db.token")
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))

	srv := startServer(t, data)
	var tasks []struct {
		ID             int64
		Summary        string
		Status         string
		WaitingDetails *string `json:"waiting_details"`
		ConversationID *int64  `json:"conversation_id"`
		AgentID        *int64  `json:"agent_id"`
		Steps          []struct{ Title, Status string }
	}
	code, body := call(t, "GET", srv.url+"/api/tasks", token, "")
	if code != 200 || json.Unmarshal(body, &tasks) != nil || len(tasks) != 3 {
		t.Fatalf("GET /api/tasks on the upgraded database: %d %s", code, body)
	}
	first, waiting, done := tasks[0], tasks[1], tasks[2]
	if first.Summary != "Write the release notes" || first.AgentID == nil || first.ConversationID == nil ||
		len(first.Steps) != 2 || first.Steps[0].Status != "completed" || first.Steps[1].Title != "Review" {
		t.Errorf("task 1 after the upgrade: %+v", first)
	}
	if waiting.Status != "Waiting" || waiting.WaitingDetails == nil || *waiting.WaitingDetails != "Formal or casual?" {
		t.Errorf("the waiting task after the upgrade: %+v", waiting)
	}
	if done.Summary != "Old finished work" || done.Status != "Done" {
		t.Errorf("the done task after the upgrade: %+v", done)
	}

	code, body = call(t, "GET", srv.url+"/api/tasks/1", token, "")
	var one struct {
		ProjectID string `json:"project_id"`
	}
	if code != 200 || json.Unmarshal(body, &one) != nil || one.ProjectID == "" {
		t.Fatalf("GET /api/tasks/1: %d %s", code, body)
	}
	var messages []struct{ Content string }
	code, body = call(t, "GET", srv.url+"/api/projects/"+one.ProjectID+"/conversations/1/messages", token, "")
	if code != 200 || json.Unmarshal(body, &messages) != nil || len(messages) != 2 || messages[1].Content != "Agenda attached" {
		t.Errorf("the conversation's messages after the upgrade: %d %s", code, body)
	}
	if code, body := call(t, "POST", srv.url+"/api/tasks/2/respond", token, `{"response":"Casual"}`); code != 200 {
		t.Errorf("answering the 0.2.0 question: %d %s", code, body)
	}
	if code, body := call(t, "POST", srv.url+"/api/tasks", token, `{"summary":"After the upgrade"}`); code != 201 {
		t.Errorf("a create after the upgrade: %d %s", code, body)
	}
	if v := schemaVersion(t, path); v != sqlite.KnownSchema() {
		t.Errorf("after the server started: schema %d, want %d", v, sqlite.KnownSchema())
	}
}

func unzip(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// schemaVersion is the highest migration applied to the SQLite database at path.
func schemaVersion(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow(`SELECT MAX(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
