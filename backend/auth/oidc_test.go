package auth

import "testing"

// TestSessionCookieName: __Host- and Secure only when people reach the server by https.
func TestSessionCookieName(t *testing.T) {
	for _, tc := range []struct {
		public, name string
		secure       bool
	}{
		{"https://agentdesk.example.com", "__Host-agentdesk_session", true},
		{"HTTPS://agentdesk.example.com", "__Host-agentdesk_session", true},
		{"http://agentdesk.test", "agentdesk_session", false},
	} {
		o := OIDC{PublicURL: tc.public, Issuer: "https://id.example.com"}
		if o.SessionCookie() != tc.name || o.Secure() != tc.secure {
			t.Errorf("%s: %s secure=%v", tc.public, o.SessionCookie(), o.Secure())
		}
	}
	if v := NewSessionValue(); len(v) != 43 || v == NewSessionValue() {
		t.Errorf("session value %q", v)
	}
}
