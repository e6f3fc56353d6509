package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestTrustedProxiesFlag: a malformed --trusted-proxies (or AGENTDESK_TRUSTED_PROXIES)
// stops the server at start, saying which item is wrong.
func TestTrustedProxiesFlag(t *testing.T) {
	for _, tc := range []struct {
		flag, env, want string
	}{
		{"10.0.0.0/33", "", `"10.0.0.0/33" is neither an IP address nor a CIDR range`},
		{"127.0.0.1,nginx", "", `"nginx" is neither`},
		{"", "192.168.1.300", `"192.168.1.300" is neither`},
	} {
		t.Setenv("AGENTDESK_TRUSTED_PROXIES", tc.env)
		args := []string{"--serve", "--data", t.TempDir()}
		if tc.flag != "" {
			args = append(args, "--trusted-proxies", tc.flag)
		}
		var stdout, stderr bytes.Buffer
		if code := Main(args, &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v env %q: exit %d, stderr %q; want 2 saying %q", args, tc.env, code, stderr.String(), tc.want)
		}
	}
}
