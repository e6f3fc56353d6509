//go:build unix

package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockDataDir takes the data directory's lock (an flock of LockFile), creating the
// directory (0700) if needed, and notes this process's pid in it. When another process
// holds it, the error is a *LockedError naming that process and its address.
func LockDataDir(dataDir string) (*DirLock, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create the data directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dataDir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the data directory's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, addr := readLockNote(dataDir)
			return nil, &LockedError{Dir: dataDir, PID: pid, Addr: addr}
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	l := &DirLock{f: f}
	l.Note("")
	return l, nil
}

// Release gives the lock up.
func (l *DirLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// processAlive reports whether a process with this pid exists (signal 0 checks without
// sending anything; EPERM means it exists under another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
