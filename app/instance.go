package app

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"

	"github.com/agentdesk/agentdesk/backend/server"
)

// LockFile is the file in the data directory that the open window (or agentdesk
// --serve) holds locked, so that a second launch on the same data directory never
// starts a second server on it.
const LockFile = server.LockFile

// errAlreadyOpen means another agentdesk window holds the data directory.
var errAlreadyOpen = errors.New("an agentdesk window is already open on this data directory")

// InstanceID is the single-instance id of the window of a data directory (Wails'
// SingleInstanceLock UniqueId): one window per data directory, so that a window on
// another data directory (a test, a second profile) is not mistaken for it.
func InstanceID(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return "io.agentdesk.desktop.d" + hex.EncodeToString(sum[:8])
}
