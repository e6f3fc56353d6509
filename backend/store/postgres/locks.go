package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"hash/fnv"
	"strconv"
	"sync"
)

// ProjectLockKey is the advisory lock key of a project. Two projects whose keys
// collide only wait for each other.
func ProjectLockKey(projectID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.event_seq:"))
	h.Write([]byte(projectID))
	return int64(h.Sum64())
}

// LockProjectSQL takes a project's lock until the transaction ends.
func LockProjectSQL(projectID string) string {
	return "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(ProjectLockKey(projectID), 10) + ")"
}

// WebhookLockKey is the advisory lock key of a webhook's deliveries (the same key space
// as ProjectLockKey: a collision only makes one wait for the other).
func WebhookLockKey(id int64) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.webhook:" + strconv.FormatInt(id, 10)))
	return int64(h.Sum64())
}

// ActivityLockKey is the advisory lock key the servers take turns on to fill the
// activity trail (Tx.IndexActivity; the same key space as ProjectLockKey).
var ActivityLockKey = func() int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.activity"))
	return int64(h.Sum64())
}()

// HoldSessionLock runs fn while this session holds the advisory lock key on a
// connection of db, and reports whether it did: false, without running fn, when
// another session holds it. A server that dies lets go at once: its session ends.
func HoldSessionLock(ctx context.Context, db *sql.DB, key int64, fn func() error) (bool, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	var held bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&held); err != nil {
		conn.Close()
		return false, err
	}
	if !held {
		conn.Close()
		return false, nil
	}
	defer func() {
		// Unlocked even if ctx ended; if that fails the connection is dropped, which
		// ends its session and so its lock.
		var ok bool
		if err := conn.QueryRowContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key).Scan(&ok); err != nil || !ok {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}()
	return true, fn()
}

// PIDSet is the backend pids of a pool's connections (the writers', for the listener).
// A connection closed leaves its pid: at worst, another backend given it later is
// taken for one of ours, and its notification is missed; the hub also looks every second.
type PIDSet struct{ m sync.Map }

func (p *PIDSet) Add(pid uint32)      { p.m.Store(pid, struct{}{}) }
func (p *PIDSet) Has(pid uint32) bool { _, ok := p.m.Load(pid); return ok }

// Each calls fn with each pid of the set.
func (p *PIDSet) Each(fn func(pid uint32)) {
	p.m.Range(func(pid, _ any) bool { fn(pid.(uint32)); return true })
}
