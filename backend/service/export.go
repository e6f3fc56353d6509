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
// path as `agentdesk backup`) while the service keeps serving. It needs the admin scope
// (the local owner holds it). The copy holds every project of the database.
func (s *Service) ExportDatabase(ctx context.Context, p *auth.Principal) (*Export, error) {
	if err := require(p, auth.Admin); err != nil {
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
	Version string `json:"version"`
	// DataDir and Database are given to callers with the admin scope only: a team
	// server's file layout is none of a task-only token's business.
	DataDir  string `json:"dataDir,omitempty"`
	Database string `json:"database,omitempty"`
}

// About answers any authenticated caller.
func (s *Service) About(ctx context.Context, p *auth.Principal) (*About, error) {
	if p == nil {
		return nil, require(p, auth.Admin)
	}
	if p.TokenType == "data" {
		return nil, errs.Forbid("data tokens are accepted only by the /api/vector endpoints; use a platform token")
	}
	a := &About{Version: version.Version}
	if p.Has(auth.Admin) {
		db, err := filepath.Abs(s.store.Path())
		if err != nil {
			db = s.store.Path()
		}
		a.Database, a.DataDir = db, filepath.Dir(db)
	}
	return a, nil
}
