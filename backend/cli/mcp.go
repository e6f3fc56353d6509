package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/mcp"
	"github.com/agentdesk/agentdesk/backend/server"
)

// serveMCP is `agentdesk mcp`: an MCP server on stdin and stdout, for one local MCP
// client, whose tools call a running agentdesk over HTTP. Nothing but the protocol is
// written to stdout; what goes wrong is said on stderr.
func serveMCP(args []string, dataDir string, stderr io.Writer) error {
	fs := newFlags("mcp", &dataDir)
	url := fs.String("url", "", "agentdesk's base URL (default $AGENTDESK_URL, else the server running on the data directory)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *url == "" {
		*url = os.Getenv("AGENTDESK_URL")
	}
	if *url == "" {
		*url = server.RunningURL(dataDir)
	}
	if *url == "" {
		return fmt.Errorf("no agentdesk server is running on %s: start one (agentdesk, or agentdesk --serve), or set AGENTDESK_URL", dataDir)
	}
	creds, err := mcpCredentials()
	if err != nil {
		return err
	}
	api := client.New(*url, creds)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	who, err := mcp.WhoAmI(ctx, api)
	var ae *client.Error
	switch {
	case errors.As(err, &ae):
		return fmt.Errorf("agentdesk at %s refused the credentials: %s", *url, ae.Message)
	case err != nil:
		return fmt.Errorf("no agentdesk server answers at %s (%v): start one (agentdesk, or agentdesk --serve), or set AGENTDESK_URL", *url, err)
	}
	s := mcp.NewServer(mcp.Config{API: api, Caller: who, Changes: mcp.ClientChanges(api)})
	if err := s.Run(ctx, &sdk.StdioTransport{}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// mcpCredentials are AGENTDESK_TOKEN's, else the agent's of the agent variables.
func mcpCredentials() (client.Option, error) {
	if token := os.Getenv("AGENTDESK_TOKEN"); token != "" {
		return client.WithToken(token), nil
	}
	project, name := os.Getenv("SERVICE_PROJECT_ID"), os.Getenv("AGENT_NAME")
	digest := os.Getenv("SERVICE_API_TOKEN")
	if digest == "" && os.Getenv("SERVICE_TOKEN_SECRET") != "" {
		digest = client.AgentDigest(project, os.Getenv("SERVICE_TOKEN_SECRET"))
	}
	if project == "" || name == "" || digest == "" {
		return nil, errors.New("no credentials: set AGENTDESK_TOKEN to a platform token, or the agent variables " +
			"(SERVICE_PROJECT_ID, AGENT_NAME, SERVICE_API_TOKEN or SERVICE_TOKEN_SECRET) from: agentdesk agent env --project ID --name NAME")
	}
	return client.WithAgent(project, digest, name, os.Getenv("SERVICE_NAMESPACE")), nil
}
