package api_test

import (
	"github.com/agentdesk/agentdesk/backend/auth"
	"os"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ownerOf(projectID string) *auth.Principal { return auth.Owner(projectID) }
