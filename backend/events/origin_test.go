package events_test

import (
	"testing"

	"github.com/agentdesk/agentdesk/backend/events"
)

func TestOriginAllowed(t *testing.T) {
	public := []string{"https://desk.example.com/", "wails://wails"}
	cases := []struct {
		origin  string
		allowed []string
		want    bool
	}{
		{"", nil, true},
		{"http://localhost:5173", nil, true},
		{"http://LOCALHOST", nil, true},
		{"http://127.1.2.3:80", nil, true},
		{"http://[::1]:8080", nil, true},
		{"http://desk.example.com", nil, false},
		{"http://localhost.evil.example", nil, false},
		{"http://127.0.0.1.evil.example", nil, false},
		{"null", nil, false},
		{"https://desk.example.com", public, true},
		{"https://desk.example.com:443", public, true},
		{"https://DESK.example.com", public, true},
		{"http://desk.example.com", public, false}, // another scheme is another origin
		{"https://desk.example.com:8443", public, false},
		{"https://other.example.com", public, false},
		{"wails://wails", public, true},
		{"http://localhost:8080", public, true},
	}
	for _, c := range cases {
		if got := events.OriginAllowed(c.origin, c.allowed); got != c.want {
			t.Errorf("OriginAllowed(%q, %q) = %v, want %v", c.origin, c.allowed, got, c.want)
		}
	}
}
