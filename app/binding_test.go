package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSessionJSONIsTheUIContract(t *testing.T) {
	d := &Desktop{session: Session{Token: "adk_x", ServerURL: "http://127.0.0.1:8080"}}
	b, err := json.Marshal(d.Session())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"token":"adk_x","serverURL":"http://127.0.0.1:8080"}` {
		t.Fatalf("Session() as the window sees it: %s", b)
	}
}

// captureLog sends slog's output to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &buf
}

func TestWindowHandlerLogsTheFirstSignedInSuccessOnce(t *testing.T) {
	buf := captureLog(t)
	const token = "adk_0123456789abcdefghijABCDEFGHIJ0123456789"
	status := http.StatusUnauthorized
	h := windowHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/stream" {
			w.Write([]byte("no header written")) // implicit 200
			w.(http.Flusher).Flush()             // gin's Flush assumes the writer can
			return
		}
		w.WriteHeader(status)
	}), token)
	do := func(path, auth string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		h.ServeHTTP(struct{ http.ResponseWriter }{rec}, req) // like the webview's writer: no Flush
		return rec.Code
	}

	if do("/api/tasks", "Bearer "+token) != 401 || !strings.Contains(buf.String(), "window request refused") {
		t.Fatalf("a refused session request must be logged as a warning:\n%s", buf)
	}
	status = http.StatusOK
	do("/graphql", "Bearer adk_someoneelse0123456789abcdefghijABCDEF") // not the session
	do("/graphql", "")
	if strings.Contains(buf.String(), "window signed in") {
		t.Fatalf("requests without the session token must not count:\n%s", buf)
	}
	do("/graphql", "bearer "+token)
	do("/api/tasks", "Bearer "+token)
	if n := strings.Count(buf.String(), "window signed in"); n != 1 || !strings.Contains(buf.String(), "path=/graphql status=200") {
		t.Fatalf("want one signed-in line naming the first success, got %d:\n%s", n, buf)
	}
	if do("/api/stream", "Bearer "+token) != 200 {
		t.Fatal("a handler that writes without WriteHeader answers 200")
	}
	if strings.Contains(buf.String(), token) {
		t.Fatal("the token must never be logged")
	}
}

// Notify takes only routes of the UI as the path a click opens, and says when the
// machine has no notification service rather than failing silently.
func TestNotifyBinding(t *testing.T) {
	d := &Desktop{}
	for _, bad := range []string{"", "tasks/1", "/tasks/1?x", "javascript:alert(1)", "/tasks/1/../x", "//evil.example"} {
		if err := d.Notify("Waiting: x", "", bad); err == nil || !strings.Contains(err.Error(), "not a route") {
			t.Errorf("path %q: %v", bad, err)
		}
	}
	if err := d.Notify(" ", "", "/inbox"); err == nil {
		t.Error("an empty title was accepted")
	}
	if err := d.Notify("Waiting: x", "", "/tasks/12"); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("no notifier: %v", err)
	}
}
