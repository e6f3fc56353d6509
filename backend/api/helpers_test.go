package api_test

import (
	"github.com/agentdesk/agentdesk/backend/auth"
	"os"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ownerOf(projectID string) *auth.Principal { return auth.Owner(projectID) }
