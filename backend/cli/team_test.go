package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestTeamFlags: team mode needs --public-url and a client id, its scopes openid, and
// AGENTDESK_OIDC_TRUST_EMAIL a boolean.
func TestTeamFlags(t *testing.T) {
	t.Setenv("AGENTDESK_PUBLIC_URL", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--serve", "--oidc-issuer", "https://id.example.com", "--oidc-client-id", "agentdesk"}, "--oidc-issuer needs --public-url"},
		{[]string{"--serve", "--public-url", "https://agentdesk.example.com", "--oidc-issuer", "https://id.example.com"}, "needs --oidc-client-id"},
		{[]string{"--serve", "--public-url", "https://agentdesk.example.com", "--oidc-issuer", "id.example.com", "--oidc-client-id", "a"}, "--oidc-issuer must be"},
		{[]string{"--serve", "--public-url", "https://agentdesk.example.com", "--oidc-issuer", "https://id.example.com", "--oidc-client-id", "a", "--oidc-scopes", "email"}, "must include openid"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(append(tc.args, "--data", t.TempDir()), &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 saying %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	// AGENTDESK_OIDC_TRUST_EMAIL must be a boolean; a typo is not taken as "no".
	t.Setenv("AGENTDESK_OIDC_TRUST_EMAIL", "maybe")
	var stdout, stderr bytes.Buffer
	args := []string{"--serve", "--public-url", "https://agentdesk.example.com", "--oidc-issuer", "https://id.example.com", "--oidc-client-id", "a", "--data", t.TempDir()}
	if code := Main(args, &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), "AGENTDESK_OIDC_TRUST_EMAIL is true or false") {
		t.Errorf("AGENTDESK_OIDC_TRUST_EMAIL=maybe: exit %d, stderr %q", code, stderr.String())
	}
	o, err := oidcConfig("https://agentdesk.example.com/", "https://id.example.com", "a", "openid email profile", " Corp.example, @b.org,")
	if err != nil || o.PublicURL != "https://agentdesk.example.com" || len(o.Scopes) != 3 || strings.Join(o.AllowedDomains, ",") != "corp.example,b.org" {
		t.Errorf("oidcConfig: %+v %v", o, err)
	}
}

// TestUserAdd: agentdesk user add invites the first owner by email and prints the member.
func TestUserAdd(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"project", "create", "--name", "Team", "--data", dir}, &stdout, &stderr, nil); code != 0 {
		t.Fatalf("project create: %d %s", code, stderr.String())
	}
	var p struct{ ID string }
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil || p.ID == "" {
		t.Fatalf("project create printed %q", stdout.String())
	}
	stdout.Reset()
	if code := Main([]string{"user", "add", "--project", p.ID, "--email", "Dana@Example.com", "--role", "owner", "--data", dir}, &stdout, &stderr, nil); code != 0 {
		t.Fatalf("user add: %d %s", code, stderr.String())
	}
	var m struct {
		ProjectID, Email, Role string
		UserID                 int64
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil || m.ProjectID != p.ID || m.Email != "dana@example.com" || m.Role != "owner" || strings.Count(stdout.String(), "\n") != 1 {
		t.Fatalf("user add printed %q (%v)", stdout.String(), err)
	}
	stderr.Reset()
	if code := Main([]string{"user", "add", "--project", p.ID, "--email", "dana@example.com", "--data", dir}, &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), "role") {
		t.Fatalf("user add without --role: %d %q", code, stderr.String())
	}
}
