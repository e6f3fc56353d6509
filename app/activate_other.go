//go:build desktop && !linux

package app

import "errors"

// activateRunning is done by Wails' own SingleInstanceLock on macOS and Windows; this
// shell has only been built and tested on Linux.
func activateRunning(uniqueID string) error {
	return errors.New("bringing the open window to the front is implemented on Linux only")
}
