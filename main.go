// Command agentdesk is the Task and Conversation Service for software agents and people:
// a desktop window, or with --serve a headless server. See README.md.
package main

import (
	"os"

	"github.com/agentdesk/agentdesk/app"
	"github.com/agentdesk/agentdesk/backend/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, app.Run))
}
