//go:build !desktop

package app

import (
	"fmt"
	"os"

	"github.com/agentdesk/agentdesk/backend/server"
)

// Run would open the desktop window; this build has none, so it prints how to use
// --serve and returns exit status 2.
func Run(cfg server.Config) int {
	fmt.Fprintln(os.Stderr, NoDesktopHint)
	return 2
}
