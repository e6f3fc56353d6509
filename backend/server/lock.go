package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the file in the data directory that the process serving it (the desktop
// window, or --serve) holds locked, so that no second server ever runs on the same
// database: their caches would go stale, and the scheduler would run every job twice.
// The name dates from when only the window took it; older windows lock the same file.
const LockFile = "agentdesk.window.lock"

// DirLock is a held lock of a data directory; the OS releases it when the process ends,
// however it ends.
type DirLock struct{ f *os.File }

// LockedError says that another process holds the data directory.
type LockedError struct {
	Dir  string
	PID  int    // 0 when the lock file does not say
	Addr string // where the holder serves, "" when it does not say (yet)
}

func (e *LockedError) Error() string {
	who := "another agentdesk"
	if e.PID > 0 {
		who += fmt.Sprintf(" (pid %d)", e.PID)
	}
	if e.Addr != "" {
		return fmt.Sprintf("%s is already serving the data directory %s at %s; use that one, stop it first, or give this one another --data directory", who, e.Dir, e.Addr)
	}
	return fmt.Sprintf("%s is already running on the data directory %s (a desktop window, or a server still starting); stop it first, or give this one another --data directory", who, e.Dir)
}

// readLockNote reads what the holder wrote in the lock file: its pid, then its address.
func readLockNote(dir string) (pid int, addr string) {
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		return 0, ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	if len(lines) > 1 {
		addr = strings.TrimSpace(lines[1])
	}
	return pid, addr
}

// Note writes this process's pid and, if known, the address it serves at into the lock
// file, for the message a second process gives. The lock, not the note, is what counts.
func (l *DirLock) Note(addr string) {
	if l == nil || l.f == nil {
		return
	}
	note := strconv.Itoa(os.Getpid()) + "\n"
	if addr != "" {
		note += addr + "\n"
	}
	if err := l.f.Truncate(0); err == nil {
		l.f.WriteAt([]byte(note), 0)
	}
}
