package graphql_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// httpaudit is the npm project of the tests below, or a skip (a failure under make test).
func httpaudit(t *testing.T) (node, dir string) {
	t.Helper()
	dir = filepath.Join("testdata", "httpaudit")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "graphql-http")); err != nil {
		missing(t, "graphql-http is not installed: run `make wsclient` (npm ci --prefix backend/graphql/"+filepath.ToSlash(dir)+")")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed: this test runs graphql-http's audit with Node.js")
	}
	return node, dir
}

// httpauditScript prepares one of testdata/httpaudit's scripts against a new real
// server, with a task:read token, for a minute at most.
func httpauditScript(t *testing.T, script string) *exec.Cmd {
	node, dir := httpaudit(t)
	env := testenv.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTDESK_URL="+env.URL, "AGENTDESK_TOKEN="+env.Token(t, env.Project.ID, auth.TaskRead))
	return cmd
}

// TestIntrospectionToday: graphql-js (16) loads the schema with the introspection query
// of today's tools, every option on (specifiedByURL, isRepeatable, the schema's
// description, includeDeprecated on arguments, isOneOf), which graphql-go alone does
// not answer (introspection.go).
func TestIntrospectionToday(t *testing.T) {
	cmd := httpauditScript(t, "introspect.mjs")
	out, err := cmd.CombinedOutput()
	var got struct{ Types int }
	if err != nil || json.Unmarshal(out, &got) != nil || got.Types < 20 {
		t.Fatalf("graphql-js could not load the schema: %v\n%s", err, out)
	}
	t.Logf("graphql-js built the schema: %d types", got.Types)
}

// TestGraphQLOverHTTPAudit runs the GraphQL-over-HTTP spec's own audit, graphql-http's
// auditServer (testdata/httpaudit, installed by `make wsclient` as the graphql-ws
// client is), against a real server with a valid token: every audit must pass, with no
// warning. Without the npm package it skips, unless make test requires it.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	cmd := httpauditScript(t, "audit.mjs")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct{ ID, Name, Status, Reason string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit printed %q: %v", line, err)
		}
		n++
		if r.Status != "ok" {
			t.Errorf("%s %s: %s: %s", r.Status, r.ID, r.Name, r.Reason)
		}
	}
	if n < 20 {
		t.Fatalf("only %d audits ran:\n%s", n, out)
	}
	t.Logf("%d audits passed", n)
}
