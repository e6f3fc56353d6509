package events_test

import (
	"testing"

	"github.com/agentdesk/agentdesk/backend/events"
)

func TestOriginAllowed(t *testing.T) {
	public := []string{"https://desk.example.com/", "wails://wails"}
	own := []string{"http://127.0.0.1:8080", "http://localhost:8080"} // a server on loopback
	cases := []struct {
		origin  string
		allowed []string
		want    bool
	}{
		{"", nil, true}, // not a browser
		{"http://127.0.0.1:8080", own, true},
		{"http://LOCALHOST:8080", own, true},
		{"http://127.0.0.1:8080", nil, false},
		{"http://127.0.0.1:3000", own, false}, // another loopback port: another origin
		{"http://localhost:5173", own, false},
		{"http://127.0.0.2:8080", own, false},
		{"http://[::1]:8080", own, false},
		{"https://127.0.0.1:8080", own, false},
		{"http://localhost", own, false},
		{"http://localhost.evil.example:8080", own, false},
		{"http://127.0.0.1.evil.example:8080", own, false},
		{"null", own, false},
		{"https://desk.example.com", public, true},
		{"https://desk.example.com:443", public, true},
		{"https://DESK.example.com", public, true},
		{"http://desk.example.com", public, false}, // another scheme is another origin
		{"https://desk.example.com:8443", public, false},
		{"https://other.example.com", public, false},
		{"wails://wails", public, true},
		{"http://localhost:8080", public, false},
	}
	for _, c := range cases {
		if got := events.OriginAllowed(c.origin, c.allowed); got != c.want {
			t.Errorf("OriginAllowed(%q, %q) = %v, want %v", c.origin, c.allowed, got, c.want)
		}
	}
}
