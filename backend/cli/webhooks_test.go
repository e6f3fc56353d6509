package cli

import (
	"bytes"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
)

// --webhooks-allow-private (or AGENTDESK_WEBHOOKS_ALLOW_PRIVATE=1) reaches the server's
// configuration; without either, webhooks reach the public internet only.
func TestWebhooksAllowPrivateFlag(t *testing.T) {
	var got server.Config
	desktop := func(cfg server.Config) int { got = cfg; return 0 }
	var stdout, stderr bytes.Buffer
	for _, tc := range []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, false},
		{"", []string{"--webhooks-allow-private"}, true},
		{"1", nil, true},
		{"1", []string{"--webhooks-allow-private=false"}, false},
	} {
		t.Setenv("AGENTDESK_WEBHOOKS_ALLOW_PRIVATE", tc.env)
		got = server.Config{}
		args := append([]string{"--data", t.TempDir()}, tc.args...)
		if code := Main(args, &stdout, &stderr, desktop); code != 0 || got.WebhooksAllowPrivate != tc.want {
			t.Fatalf("env %q, args %q: exit %d, WebhooksAllowPrivate %v, want %v (stderr %q)", tc.env, tc.args, code, got.WebhooksAllowPrivate, tc.want, stderr.String())
		}
	}
}
