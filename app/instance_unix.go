//go:build unix

package app

import (
	"errors"

	"github.com/agentdesk/agentdesk/backend/server"
)

// lockInstance takes the data directory's lock, the one --serve takes too
// (server.LockDataDir: an flock, released by the OS when the process ends however it
// ends). It returns errAlreadyOpen when another window holds it, and the
// *server.LockedError naming the address when a server (--serve) does.
func lockInstance(dataDir string) (release func(), err error) {
	l, err := server.LockDataDir(dataDir)
	var locked *server.LockedError
	if errors.As(err, &locked) {
		if locked.Addr != "" { // only --serve notes an address: no window to bring forward
			return nil, locked
		}
		return nil, errAlreadyOpen
	}
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}
