package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestMailFlags: --smtp-url and --smtp-from go together and are checked before the
// server starts, with a usage error that never shows the password.
func TestMailFlags(t *testing.T) {
	t.Setenv("AGENTDESK_SMTP_URL", "")
	t.Setenv("AGENTDESK_SMTP_FROM", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--serve", "--smtp-url", "smtp://desk:hunter2@mail.example.com"}, "--smtp-url needs --smtp-from"},
		{[]string{"--serve", "--smtp-from", "desk@example.com"}, "--smtp-from needs --smtp-url"},
		{[]string{"--serve", "--smtp-url", "imap://desk:hunter2@mail.example.com", "--smtp-from", "desk@example.com"}, "must start with smtp://"},
		{[]string{"--serve", "--smtp-url", "smtp://desk:hunter2@mail.example.com", "--smtp-from", "desk"}, "--smtp-from must be an email address"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append(tc.args, "--data", t.TempDir()), &stdout, &stderr, nil)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "hunter2") {
			t.Errorf("%v: exit %d, stderr %q; want 2 saying %q, without the password", tc.args, code, stderr.String(), tc.want)
		}
	}
}
