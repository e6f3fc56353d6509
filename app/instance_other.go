//go:build !unix

package app

import "os"

// lockInstance on systems without flock only makes sure the data directory exists; the
// window's SingleInstanceLock (a named mutex on Windows) still keeps one window open.
func lockInstance(dataDir string) (release func(), err error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	return func() {}, nil
}
