package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
)

// sqliteEngine is the store on SQLite, one file in the data directory: one writer
// connection whose single writer commits the writes in groups (write.go), a syncer that
// makes each group durable with one fsync of the WAL (durable.go), and package sqlite's
// background checkpointer and watch on other processes' commits.
type sqliteEngine struct {
	*Store

	jobs         chan *job
	committed    chan committed // from the writer to the syncer (durable.go)
	syncReady    chan struct{}  // the syncer waits for a batch
	writerEnd    chan struct{}  // the syncer has acknowledged the last batch
	wal          sqlite.WALSyncer
	checkpointer *sqlite.Checkpointer
	watch        *sqlite.Watch // other processes' commits

	readStmts, writeStmts *stmtCache

	beforeSync atomic.Pointer[func(events []model.Event) error] // tests: runs before each fsync with the events it covers; an error stands for the fsync's
}

// Open opens (creating if needed) the database at path, applies pending migrations and
// starts the writer. A database written by a newer agentdesk is refused.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	// A newer agentdesk's database is refused before anything opens it for writing:
	// not a byte of it, nor its mode, changes (Migrate checks again, under the lock).
	if v, err := sqlite.SchemaVersion(ctx, path); err != nil {
		return nil, err
	} else if known := sqlite.KnownSchema(); v > known {
		return nil, &sqlite.NewerSchemaError{Version: v, Known: known}
	}
	if err := sqlite.MakePrivate(path); err != nil {
		return nil, err
	}
	// FULL durability comes from the syncer's fsync of the WAL (durable.go), not SQLite's.
	writer, err := sql.Open("sqlite", sqlite.DSN(path, true, "NORMAL", false))
	if err != nil {
		return nil, err
	}
	sqlite.KeepOneConnection(writer)
	if err := sqlite.Migrate(ctx, writer); err != nil {
		writer.Close()
		return nil, err
	}
	// The -wal and -shm files exist now; an older -shm may have kept a wider mode.
	for _, p := range []string{path + "-wal", path + "-shm"} {
		sqlite.NarrowMode(p)
	}
	reader, err := sql.Open("sqlite", sqlite.DSN(path, false, opts.Synchronous, true))
	if err != nil {
		writer.Close()
		return nil, err
	}
	sizeReadPool(reader)
	reader.SetConnMaxIdleTime(0)
	reader.SetConnMaxLifetime(0)

	e := &sqliteEngine{
		Store:      newStore(path, writer, reader, sqliteSQL, sqliteStopTexts, opts),
		jobs:       make(chan *job, 1024),
		committed:  make(chan committed, 64),
		syncReady:  make(chan struct{}, 1),
		writerEnd:  make(chan struct{}),
		wal:        sqlite.WALSyncer{DBPath: path},
		readStmts:  newStmtCache(reader),
		writeStmts: newStmtCache(writer),
	}
	e.eng = e
	e.read.cache = e.readStmts
	e.watch, err = sqlite.OpenWatch(path, opts.Synchronous, func() {
		e.tokens.clear()
	})
	if err != nil {
		reader.Close()
		writer.Close()
		return nil, err
	}
	e.checkpointer = sqlite.NewCheckpointer(reader, writer, e.stop)
	go e.writeLoop()
	go e.syncLoop()
	return e.Store, nil
}

// submit queues j for the single writer.
func (s *sqliteEngine) submit(j *job) error {
	select {
	case s.jobs <- j:
		return nil
	case <-j.ctx.Done():
		return j.ctx.Err()
	}
}

// close ends the writer once it has written what is queued, then the checkpointer, and
// closes the connections: the writer's last, so that SQLite checkpoints and removes the
// WAL.
func (s *sqliteEngine) close() error {
	<-s.writerEnd
	s.checkpointer.Wait()
	s.readStmts.close()
	s.writeStmts.close()
	return errors.Join(s.watch.Close(), s.reader.Close(), s.writer.Close(), s.wal.Close())
}

func (s *sqliteEngine) canBackup() error { return nil }

// checkTokens looks at other processes' commits (sqlite.Watch) unless a look began less
// than foreignLookEvery ago.
func (s *sqliteEngine) checkTokens(ctx context.Context) error {
	s.watch.CheckRecent(ctx, foreignLookEvery)
	return nil
}

// holdWebhook just runs fn: one server per data directory.
func (s *sqliteEngine) holdWebhook(_ context.Context, _ int64, fn func() error) (bool, error) {
	return true, fn()
}

func (s *sqliteEngine) queued() int { return len(s.jobs) }

// listening: there are no other servers.
func (s *sqliteEngine) listening() bool { return true }

// backup is Store.Backup (sqlite.Backup).
func (s *sqliteEngine) backup(ctx context.Context, path string) error {
	return sqlite.Backup(ctx, s.path, s.opts.Synchronous, path)
}
