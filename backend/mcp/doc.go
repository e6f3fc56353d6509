// Package mcp makes agentdesk a Model Context Protocol server (the official Go SDK does
// the protocol). One set of tools and resources, each a thin adapter over the REST API
// through the Go client, serves both transports: `agentdesk mcp` (stdio, over HTTP to a
// running server) and /mcp on the server (Streamable HTTP, the same REST calls made
// in-process with the request's own credentials). Every rule stays in the service.
package mcp
