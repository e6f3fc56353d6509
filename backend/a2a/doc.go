// Package a2a makes every agentdesk agent an A2A (Agent2Agent protocol) agent: its Agent
// Card and its JSON-RPC endpoint, message/stream and tasks/resubscribe over SSE. The
// official Go SDK (github.com/a2aproject/a2a-go, imported here under its own name a2a)
// speaks the protocol; this package only translates between its types and the service,
// where every rule lives (backend/service/a2a.go: the states both ways, what a message does).
package a2a
