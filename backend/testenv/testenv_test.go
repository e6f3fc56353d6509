package testenv_test

import (
	"log"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestRequestLogIsQuiet: under testenv a request writes no log line, while warnings
// and errors still reach the test output.
func TestRequestLogIsQuiet(t *testing.T) {
	env := testenv.Start(t)
	// A file, not a buffer: the server's goroutines may log while the test reads.
	out, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	prev := log.Writer()
	log.SetOutput(out)
	t.Cleanup(func() { log.SetOutput(prev) })

	// Twice on one kept-alive connection: the server reads the second request only
	// after the first one's handler (and its log line) is done.
	for range 2 {
		r := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/healthz"})
		if r.Status != http.StatusOK {
			t.Fatalf("healthz: %d %s", r.Status, r.Body)
		}
	}
	slog.Warn("a warning stays visible")
	slog.Error("an error stays visible")

	raw, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	got := string(raw)
	if strings.Contains(got, "/healthz") {
		t.Errorf("the request was logged:\n%s", got)
	}
	for _, want := range []string{"a warning stays visible", "an error stays visible"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}
