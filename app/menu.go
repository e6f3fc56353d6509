package app

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/version"
)

// The window's menu (desktop.go builds it with Wails): the version, the data directory
// (a click opens it in the file manager and copies its path) and "Back up now". What the
// items say and do is here, without the window, so that tests reach it.

// versionLabel is the menu's first, disabled, line.
func versionLabel() string { return "agentdesk " + version.Version }

// dataDirLabel names the data directory in the menu.
func dataDirLabel(dataDir string) string { return "Data directory: " + dataDir }

// backupDir is where "Back up now" writes: the Downloads folder, where the web UI's
// Export backup lands too, or the home directory when there is none.
func backupDir(home string) string {
	if d := filepath.Join(home, "Downloads"); isDir(d) {
		return d
	}
	return home
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// backUpNow writes a consistent copy of the database, as `agentdesk backup` does, to a
// new file named for the time in backupDir(home), and returns its path.
func backUpNow(ctx context.Context, svc *service.Service, home string, now time.Time) (string, error) {
	name := "agentdesk-backup-" + now.Format("2006-01-02-150405") + ".db"
	return svc.Backup(ctx, auth.Owner(""), filepath.Join(backupDir(home), name))
}
