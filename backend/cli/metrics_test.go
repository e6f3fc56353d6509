package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
)

// --metrics-addr (or AGENTDESK_METRICS_ADDR) reaches the server's configuration; a
// value that is not host:port is a usage error.
func TestMetricsAddrFlag(t *testing.T) {
	var got server.Config
	desktop := func(cfg server.Config) int { got = cfg; return 0 }
	t.Setenv("AGENTDESK_METRICS_ADDR", "127.0.0.1:9191")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"--data", t.TempDir()}, &stdout, &stderr, desktop); code != 0 || got.MetricsAddr != "127.0.0.1:9191" {
		t.Fatalf("env: exit %d, MetricsAddr %q, stderr %q", code, got.MetricsAddr, stderr.String())
	}
	if code := Main([]string{"--data", t.TempDir(), "--metrics-addr", "127.0.0.1:9292"}, &stdout, &stderr, desktop); code != 0 || got.MetricsAddr != "127.0.0.1:9292" {
		t.Fatalf("flag: exit %d, MetricsAddr %q", code, got.MetricsAddr)
	}
	stderr.Reset()
	if code := Main([]string{"--serve", "--data", t.TempDir(), "--metrics-addr", "9090"}, &stdout, &stderr, desktop); code != 2 || !strings.Contains(stderr.String(), "--metrics-addr must be host:port") {
		t.Fatalf("bad address: exit %d, stderr %q", code, stderr.String())
	}
}
