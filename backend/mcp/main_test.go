package mcp_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// binary is agentdesk, built for the stdio tests (agentdesk mcp).
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentdesk-mcp-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "agentdesk")
	build := exec.Command("go", "build", "-o", binary, "../..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build agentdesk: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}
