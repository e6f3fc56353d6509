package service

import (
	"context"
	"os"
	"path/filepath"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/version"
)

// Export is a consistent snapshot of the database in a temporary file of the data
// directory, for a download. The caller streams File and then calls Remove.
type Export struct {
	File *os.File
	Size int64
	path string
}

// Remove closes and deletes the temporary snapshot.
func (e *Export) Remove() {
	e.File.Close()
	os.Remove(e.path)
}

// ExportDatabase makes a consistent copy of the live database (VACUUM INTO, the same
// path as `agentdesk backup`) while the service keeps serving. The copy holds every
// project of the database, so one project's admin may not take it while other projects
// live there: it needs the local owner (the CLI, the desktop window's session), or the
// admin scope on a database that holds no project but the caller's.
func (s *Service) ExportDatabase(ctx context.Context, p *auth.Principal) (*Export, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if !isLocalOwner(p) {
		projects, err := s.store.Read().Projects(ctx)
		if err != nil {
			return nil, internal("list projects", err)
		}
		if len(projects) != 1 || projects[0].ID != p.ProjectID {
			return nil, errs.Forbid("this database holds other projects too, so only its owner may export it: " +
				"use the desktop window's Export, or `agentdesk backup --out FILE` on the server")
		}
	}
	if err := s.store.CanBackup(); err != nil {
		return nil, err
	}
	dir := filepath.Dir(s.store.Path())
	tmp, err := os.CreateTemp(dir, ".export-*.db")
	if err != nil {
		return nil, internal("create the export file", err)
	}
	path := tmp.Name()
	// VACUUM INTO wants a file that does not exist yet: keep the unique name only.
	tmp.Close()
	os.Remove(path)
	if err := s.store.Backup(ctx, path); err != nil {
		os.Remove(path)
		return nil, internal("export the database", err)
	}
	f, err := os.Open(path)
	if err != nil {
		os.Remove(path)
		return nil, internal("open the export", err)
	}
	// Where the system allows it (not Windows), the name goes now: the open file stays
	// readable, and nothing is left behind if the download or the server stops midway.
	_ = os.Remove(path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, internal("stat the export", err)
	}
	return &Export{File: f, Size: st.Size(), path: path}, nil
}

// About says which build this is and, to administrators, where its data lives.
type About struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"buildDate"`
	// DataDir and Database are given to callers with the admin scope only: a team
	// server's file layout is none of a task-only token's business.
	DataDir  string `json:"dataDir,omitempty"`
	Database string `json:"database,omitempty"`
}

// About answers any authenticated caller (data tokens never get here: Authenticate
// takes them on /api/vector only).
func (s *Service) About(ctx context.Context, p *auth.Principal) (*About, error) {
	if p == nil {
		return nil, require(p, auth.Admin)
	}
	a := &About{Version: version.Version, Commit: version.Commit, BuildDate: version.Date}
	if p.Has(auth.Admin) {
		db := s.store.Path()
		if s.store.CanBackup() == nil { // a file (SQLite), in the data directory
			if abs, err := filepath.Abs(db); err == nil {
				db = abs
			}
			a.DataDir = filepath.Dir(db)
		}
		a.Database = db
	}
	return a, nil
}

// isLocalOwner reports whether the caller is the machine's own user: the CLI, or the
// desktop window, whose session token has a name no one else may give a token.
func isLocalOwner(p *auth.Principal) bool {
	return p != nil && (p.Kind == auth.KindOwner || p.Kind == auth.KindToken && p.Name == DesktopSessionTokenName)
}
