// Package service holds agentdesk's rules: projects, agents, tokens, tasks. Every
// interface (REST, GraphQL, the event stream, the CLI, the desktop window) calls it
// with an authenticated principal; scope checks and every state rule live here once.
package service
