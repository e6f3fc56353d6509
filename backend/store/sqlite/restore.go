package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Restoring a backup (agentdesk restore). The caller holds the data directory's lock,
// so no server runs on the database while it is replaced.
//
// The backup is checked first (a SQLite file, integrity_check ok, an agentdesk schema
// no newer than this one's), copied beside the database through SQLite (VACUUM INTO,
// which also takes in a -wal left beside the backup), flushed to disk, checked again,
// and renamed over the database: at every moment the database's name holds either the
// old database, whole, or the new one. The old one is kept as
// agentdesk.db.replaced-<time>, by a hard link taken before the rename, after its WAL
// was checkpointed into it; its -wal and -shm go before the new file arrives, since
// SQLite would apply a stale WAL to whatever file then has the name.

// RestoreResult is what Restore did.
type RestoreResult struct {
	Database      string  `json:"database"`       // the database file restored
	From          string  `json:"from"`           // the backup it was restored from
	Replaced      *string `json:"replaced"`       // where the database it replaced is kept; null when there was none
	SchemaVersion int64   `json:"schema_version"` // the backup's (agentdesk migrates it on its next start)
	Bytes         int64   `json:"bytes"`          // the restored file's size
}

// openReadOnly opens the SQLite file at path for reading only. Without a -wal beside
// it no process has it open in WAL mode (agentdesk always uses WAL), so it is opened
// immutable: SQLite then creates no -shm or -wal beside it. With one, it is read
// through the WAL, as a server may be writing it.
func OpenReadOnly(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	return sql.Open("sqlite", "file:"+path+"?"+q.Encode())
}

// CheckBackup checks that the file at path is an agentdesk database this agentdesk can
// open: a SQLite file whose integrity_check is ok, with agentdesk's tables and a schema
// version no newer than KnownSchema. It returns the schema version.
func CheckBackup(ctx context.Context, path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("cannot read the backup: %w", err)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a file", path)
	}
	db, err := OpenReadOnly(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return checkDatabase(ctx, db, path, "PRAGMA integrity_check")
}

// checkDatabase runs check (integrity_check or quick_check) on db, the file at path,
// and checks it is an agentdesk database of a known schema.
func checkDatabase(ctx context.Context, db *sql.DB, path, check string) (int64, error) {
	rows, err := db.QueryContext(ctx, check)
	if err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return 0, fmt.Errorf("%s is not a SQLite database (nor an agentdesk backup)", path)
		}
		return 0, fmt.Errorf("%s cannot be checked, it is likely damaged: %w", path, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return 0, err
		}
		problems = append(problems, line)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("%s cannot be checked, it is likely damaged: %w", path, err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		if len(problems) > 3 {
			problems = append(problems[:3], "...")
		}
		return 0, fmt.Errorf("%s is damaged (SQLite's %s found: %s); restore another backup", path, strings.TrimPrefix(check, "PRAGMA "),
			strings.Join(problems, "; "))
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table'
		AND name IN ('goose_db_version', 'projects', 'tasks', 'events')`).Scan(&n); err != nil {
		return 0, err
	}
	var version sql.NullInt64
	if n == 4 {
		if err := db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM goose_db_version`).Scan(&version); err != nil {
			return 0, err
		}
	}
	if version.Int64 < 1 {
		return 0, fmt.Errorf("%s is a SQLite database but not an agentdesk one (it lacks agentdesk's tables)", path)
	}
	if known := KnownSchema(); version.Int64 > known {
		return 0, &NewerSchemaError{Version: version.Int64, Known: known}
	}
	if err := checkSchemaObjects(ctx, db, path, version.Int64); err != nil {
		return 0, err
	}
	return version.Int64, nil
}

// checkSchemaObjects refuses a backup holding a trigger or view that agentdesk's schema
// at its version does not have, word for word: code in the database runs on every
// write (a trigger could un-revoke tokens), so a backup brings only agentdesk's own.
// The reference is a new in-memory database migrated to the same version.
func checkSchemaObjects(ctx context.Context, db *sql.DB, path string, version int64) error {
	ref, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return err
	}
	defer ref.Close()
	ref.SetMaxOpenConns(1) // one connection: one in-memory database
	p, err := gooseProvider(ref)
	if err != nil {
		return err
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return fmt.Errorf("build agentdesk's schema %d to compare the backup with: %w", version, err)
	}
	code := func(db *sql.DB) (map[string]string, error) {
		rows, err := db.QueryContext(ctx, `SELECT type, name, coalesce(sql, '') FROM sqlite_schema WHERE type IN ('trigger', 'view')`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var typ, name, text string
			if err := rows.Scan(&typ, &name, &text); err != nil {
				return nil, err
			}
			out[typ+" "+strconv.Quote(name)] = text
		}
		return out, rows.Err()
	}
	want, err := code(ref)
	if err != nil {
		return err
	}
	got, err := code(db)
	if err != nil {
		return err
	}
	for _, object := range slices.Sorted(maps.Keys(got)) {
		if text, ok := want[object]; !ok || text != got[object] {
			return fmt.Errorf("%s holds a %s that agentdesk's schema does not have: refused untouched; restore a backup agentdesk made", path, object)
		}
	}
	return nil
}

// Restore replaces the database at dbPath (if any) by the backup at from, as described
// above, and keeps the one it replaced beside it. The caller holds the data directory's
// lock. now names the kept file.
func Restore(ctx context.Context, from, dbPath string, now time.Time) (*RestoreResult, error) {
	from, err := filepath.Abs(from)
	if err != nil {
		return nil, err
	}
	if a, err := os.Stat(from); err == nil {
		if b, err := os.Stat(dbPath); err == nil && os.SameFile(a, b) {
			return nil, fmt.Errorf("%s is the data directory's database itself; give a backup file", from)
		}
	}
	version, err := CheckBackup(ctx, from)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(dbPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the data directory: %w", err)
	}

	// The copy, beside the database (the rename must not cross file systems).
	tmp := dbPath + ".restoring"
	os.Remove(tmp) // a stale one from a restore that was interrupted
	if err := copyDatabase(ctx, from, tmp); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	defer os.Remove(tmp) // gone once renamed; removed if anything fails
	size, err := syncFile(tmp)
	if err != nil {
		return nil, err
	}
	if err := quickCheck(ctx, tmp); err != nil {
		return nil, err
	}

	res := &RestoreResult{Database: dbPath, From: from, SchemaVersion: version, Bytes: size}
	if _, err := os.Stat(dbPath); err == nil {
		kept, err := keepReplaced(ctx, dbPath, now)
		if err != nil {
			return nil, err
		}
		res.Replaced = &kept
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// Nothing of the old database but its file may remain: a -wal left now would be
	// applied to the new file.
	for _, p := range []string{dbPath + "-wal", dbPath + "-shm", dbPath + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove the replaced database's %s: %w", filepath.Base(p), err)
		}
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		return nil, fmt.Errorf("put the restored database in place: %w", err)
	}
	if err := SyncDir(dir); err != nil {
		return nil, err
	}
	return res, nil
}

// copyDatabase writes a copy of the SQLite database at from to to (which must not
// exist), 0600.
func copyDatabase(ctx context.Context, from, to string) error {
	// VACUUM INTO would create the file with SQLite's default mode; it takes an empty one.
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, PrivateMode)
	if err != nil {
		return err
	}
	f.Close()
	db, err := OpenReadOnly(from)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO $1", to); err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return nil
}

// syncFile flushes the file at path to disk and gives its size.
func syncFile(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("flush %s to disk: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// quickCheck checks the copy as it is on disk before it goes in place.
func quickCheck(ctx context.Context, path string) error {
	db, err := OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = checkDatabase(ctx, db, path, "PRAGMA quick_check")
	return err
}

// keepReplaced keeps the database at dbPath as dbPath.replaced-<now>, 0600, its WAL
// checkpointed into it first, and returns that name. The database's own name stays in
// place (a hard link, or a copy where links are not possible).
func keepReplaced(ctx context.Context, dbPath string, now time.Time) (string, error) {
	kept := dbPath + ".replaced-" + now.UTC().Format("20060102T150405Z")
	for i := 2; ; i++ {
		if _, err := os.Lstat(kept); errors.Is(err, fs.ErrNotExist) {
			break
		}
		kept = fmt.Sprintf("%s.replaced-%s-%d", dbPath, now.UTC().Format("20060102T150405Z"), i)
	}
	walLeft := checkpointOut(ctx, dbPath)
	if err := os.Link(dbPath, kept); err != nil {
		if err := copyFile(dbPath, kept); err != nil {
			return "", fmt.Errorf("keep the replaced database as %s: %w", kept, err)
		}
	}
	if err := os.Chmod(kept, PrivateMode); err != nil {
		return "", err
	}
	if walLeft {
		// The checkpoint failed (a damaged database, say): the commits still in its WAL
		// go with it, under the name SQLite looks for beside the kept file.
		if err := os.Rename(dbPath+"-wal", kept+"-wal"); err != nil {
			return "", fmt.Errorf("keep the replaced database's WAL: %w", err)
		}
	}
	return kept, SyncDir(filepath.Dir(dbPath))
}

// checkpointOut copies the database's WAL into its file and empties it; true when a
// WAL with frames is left (the checkpoint could not run).
func checkpointOut(ctx context.Context, dbPath string) (walLeft bool) {
	wal := dbPath + "-wal"
	if st, err := os.Stat(wal); err != nil || st.Size() == 0 {
		return false
	}
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)")
	if err == nil {
		var busy, frames, done int64
		err = db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done)
		if err == nil && busy != 0 {
			err = errors.New("the database is busy")
		}
		db.Close()
	}
	st, statErr := os.Stat(wal)
	return err != nil && statErr == nil && st.Size() > 0
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, PrivateMode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
