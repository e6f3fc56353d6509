package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestPublicURL: browser pages from the public URL (here from AGENTDESK_PUBLIC_URL)
// may open the event stream; other non-loopback origins stay refused; a URL that is not
// http(s) is a usage error.
func TestPublicURL(t *testing.T) {
	data := t.TempDir()
	if _, errOut, code := run(t, "--serve", "--public-url", "ftp://desk.example.com", "--data", data); code != 2 || !strings.Contains(errOut, "--public-url") {
		t.Fatalf("bad --public-url: exit %d, %q", code, errOut)
	}
	token := setupProject(t, data)
	t.Setenv("AGENTDESK_PUBLIC_URL", "https://desk.example.com") // the server inherits it
	srv := startServer(t, data)
	url := strings.Replace(srv.url, "http://", "ws://", 1) + "/api/events"
	for origin, want := range map[string]int{"https://desk.example.com": 101, "https://other.example.com": 403, "http://desk.example.com": 403} {
		h := http.Header{"Authorization": {"Bearer " + token}, "Origin": {origin}}
		conn, resp, _ := websocket.DefaultDialer.Dial(url, h)
		if conn != nil {
			conn.Close()
		}
		if resp == nil || resp.StatusCode != want {
			t.Errorf("Origin %s: %v, want %d", origin, resp, want)
		}
	}
}
