package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/version"
)

// "Back up now" writes a SQLite copy of the live database (with what was written just
// before) into Downloads, or the home directory without one, and never overwrites.
func TestBackUpNow(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	if _, err := env.Service.CreateTask(ctx, auth.Owner(env.Project.ID), service.CreateTaskInput{Summary: "keep me"}, ""); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	at := time.Date(2026, 11, 24, 9, 30, 5, 0, time.Local)

	path, err := backUpNow(ctx, env.Service, home, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, "agentdesk-backup-2026-11-24-093005.db"); path != want {
		t.Fatalf("backup at %s, want %s (no Downloads folder: the home directory)", path, want)
	}
	raw, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(raw, []byte("SQLite format 3\x00")) || !bytes.Contains(raw, []byte("keep me")) {
		t.Fatalf("the backup is not the database with its task (%d bytes, %v)", len(raw), err)
	}
	if _, err := backUpNow(ctx, env.Service, home, at); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("a second backup of the same second: %v, want a refusal to overwrite", err)
	}

	if err := os.Mkdir(filepath.Join(home, "Downloads"), 0o755); err != nil {
		t.Fatal(err)
	}
	path, err = backUpNow(ctx, env.Service, home, at.Add(time.Second))
	if err != nil || filepath.Dir(path) != filepath.Join(home, "Downloads") {
		t.Fatalf("with a Downloads folder: %s %v", path, err)
	}
}

func TestMenuLabels(t *testing.T) {
	if got := versionLabel(); got != "agentdesk "+version.Version {
		t.Errorf("version label %q", got)
	}
	if got := dataDirLabel("/home/dana/.local/share/agentdesk"); got != "Data directory: /home/dana/.local/share/agentdesk" {
		t.Errorf("data directory label %q", got)
	}
}
