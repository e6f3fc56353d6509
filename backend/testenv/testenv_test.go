package testenv_test

import (
	"bytes"
	"log"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// syncBuffer is a buffer the server's goroutines may write to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRequestLogIsQuiet: under testenv a request writes no log line, while warnings
// and errors still reach the test output.
func TestRequestLogIsQuiet(t *testing.T) {
	env := testenv.Start(t)
	var out syncBuffer
	prev := log.Writer()
	log.SetOutput(&out)
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

	got := out.String()
	if strings.Contains(got, "/healthz") {
		t.Errorf("the request was logged:\n%s", got)
	}
	for _, want := range []string{"a warning stays visible", "an error stays visible"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}
