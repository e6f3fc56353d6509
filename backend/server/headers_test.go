package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
)

// TestSecurityHeaders: the UI's pages and the GraphQL page carry a Content-Security-
// Policy that forbids framing, Referrer-Policy same-origin and nosniff; the JSON API
// does not need them.
func TestSecurityHeaders(t *testing.T) {
	srv := startWith(t, server.Config{})
	get := func(path, accept string) http.Header {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL()+path, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, resp.StatusCode)
		}
		return resp.Header
	}
	for _, c := range []struct{ path, accept string }{
		{"/", "text/html"},
		{"/board", "text/html,application/xhtml+xml"},
		{"/graphql", "text/html"},
	} {
		h := get(c.path, c.accept)
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src ") {
			t.Errorf("GET %s: Content-Security-Policy %q, want default-src and frame-ancestors 'none'", c.path, csp)
		}
		if c.path != "/graphql" && !strings.HasPrefix(csp, "default-src 'self';") {
			t.Errorf("GET %s: Content-Security-Policy %q, want default-src 'self'", c.path, csp)
		}
		if got := h.Get("Referrer-Policy"); got != "same-origin" {
			t.Errorf("GET %s: Referrer-Policy %q, want same-origin", c.path, got)
		}
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", c.path, got)
		}
	}
	if csp := get("/healthz", "").Get("Content-Security-Policy"); csp != "" {
		t.Errorf("GET /healthz: Content-Security-Policy %q, want none", csp)
	}
}

// TestWindowSecurityHeaders: the desktop window's pages (served in-process, not through
// the listener) get the UI's policy too, with the event stream's origin allowed to
// connect and nothing else widened.
func TestWindowSecurityHeaders(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<!doctype html>")) })
	h := server.WithWindowSecurityHeaders(page, "ws://127.0.0.1:8080")
	for _, c := range []struct {
		path string
		want bool
	}{{"/", true}, {"/index.html", true}, {"/tasks/12", true}, {"/api/tasks", false}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "wails://wails"+c.path, nil))
		csp := rec.Header().Get("Content-Security-Policy")
		if !c.want {
			if csp != "" {
				t.Errorf("GET %s: Content-Security-Policy %q, want none", c.path, csp)
			}
			continue
		}
		if !strings.HasPrefix(csp, "default-src 'self'; script-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			!strings.Contains(csp, "connect-src 'self' ws://127.0.0.1:8080;") {
			t.Errorf("GET %s: Content-Security-Policy %q, want the UI's with the stream's origin in connect-src", c.path, csp)
		}
		if rec.Header().Get("Referrer-Policy") != "same-origin" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v", c.path, rec.Header())
		}
	}
}
