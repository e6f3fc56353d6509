package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/version"
)

// Config is what one MCP session needs.
type Config struct {
	API     *client.Client // every tool and resource is a REST call through it
	Caller  Caller         // decides which tools are listed
	Changes Changes        // task changes: ask_human's wait, resource subscriptions
	// SessionID, if set, names the session (the HTTP transport binds it to the caller).
	SessionID func() string
	// OnClose, if set, is called once the session has ended.
	OnClose func()
}

// instructions tell the model what agentdesk is for.
const instructions = `agentdesk is where people and coding agents share work: tasks on a board, their steps, and questions for a person.
Report your work on a task with update_task (status, steps, a message). When you need a decision, approval or information only a person has, call ask_human: it waits for the answer (or returns "waiting" with a task_id; call it again with that task_id and the same question to keep waiting).`

// NewServer returns an MCP server for one session: the tools and resources its caller
// may use. Serve it to one client (Run over stdio, or one Streamable HTTP session).
func NewServer(cfg Config) *mcp.Server {
	life, end := context.WithCancel(context.Background())
	t := &tools{api: cfg.API, who: cfg.Caller, changes: cfg.Changes, life: life}
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		GetSessionID: cfg.SessionID,
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			go func() {
				req.Session.Wait()
				end()
				if cfg.OnClose != nil {
					cfg.OnClose()
				}
			}()
		},
	}
	if cfg.Caller.has(auth.TaskRead) {
		opts.SubscribeHandler = t.subscribe
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "agentdesk", Title: "agentdesk", Version: version.Version}, opts)
	t.server = s
	t.register(s)
	return s
}

// tools serves one session's tools and resources.
type tools struct {
	api     *client.Client
	who     Caller
	changes Changes
	server  *mcp.Server
	life    context.Context // ends with the session
	watch   onceStarter     // the resource subscriptions' feed
}

// restError is a REST error as a tool reports it: the API's own message.
func restError(err error) error {
	var ae *client.Error
	if errors.As(err, &ae) {
		return errors.New(ae.Message)
	}
	return err
}

// result is a tool's answer: v as structured content (and, by the SDK, as its text).
func result(v any, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return nil, nil, restError(err)
	}
	return nil, v, nil
}

// asJSON is v as indented JSON text, for resources.
func asJSON(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	return string(b), nil
}
