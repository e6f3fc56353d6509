// Package fsstate snapshots a directory's files for tests that check something left
// them untouched (a refused restore, a newer database that must not be opened). It
// imports nothing of agentdesk, so the store's own tests can use it too.
package fsstate

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Dir maps each file of dir to its SHA-256 and mode: equal maps mean nothing changed.
func Dir(t testing.TB, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := e.Info()
		out[e.Name()] = fmt.Sprintf("%x %v", sha256.Sum256(b), info.Mode())
	}
	return out
}
