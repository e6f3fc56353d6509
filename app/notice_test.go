//go:build unix

package app

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
)

// TestServedElsewhereNamesTheRunningServer: a window started on a data directory that a
// server (--serve) holds gets the *server.LockedError, and its notice names that
// server's URL (its server.url) with a button to open it, instead of no window at all.
func TestServedElsewhereNamesTheRunningServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	held, err := server.LockDataDir(dir) // what server.Run takes
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	held.Note("http://0.0.0.0:8080")
	if err := server.NoteURL(dir, "", "http://0.0.0.0:8080"); err != nil {
		t.Fatal(err)
	}

	_, err = lockInstance(dir)
	var locked *server.LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("lockInstance on a served data directory: %v, want a *server.LockedError", err)
	}
	n := servedElsewhere(dir, locked)
	if n.OpenURL != "http://127.0.0.1:8080" || !strings.Contains(n.Message, "at http://127.0.0.1:8080") || !strings.Contains(n.Message, dir) {
		t.Fatalf("notice: %+v", n)
	}
	page := n.page()
	for _, want := range []string{"<title>agentdesk is already running</title>", `data-url="http://127.0.0.1:8080"`, "Open in browser", "window.runtime.Quit()"} {
		if !strings.Contains(page, want) {
			t.Errorf("the notice page lacks %q:\n%s", want, page)
		}
	}
}

func TestNoticePageEscapes(t *testing.T) {
	page := cannotStart(errors.New(`open database "<x>": disk & more`)).page()
	if !strings.Contains(page, "open database &#34;&lt;x&gt;&#34;: disk &amp; more") || strings.Contains(page, "Open in browser") {
		t.Fatalf("page:\n%s", page)
	}
}
