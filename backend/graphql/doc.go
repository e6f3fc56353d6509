// Package graphql is agentdesk's GraphQL interface at /graphql: a graphql-go schema
// whose resolvers are thin adapters over the service layer. Every resolver calls the
// service with the request's *auth.Principal, so scope checks and every business rule
// stay in the service; this package only translates arguments and results.
//
// Before a query is validated it is parsed and checked against limits graphql-go does
// not provide (MaxQueryBytes, MaxFields, MaxNodes, MaxLiteralDepth,
// MaxArgumentComparisons, MaxDepth, MaxCost; see limits.go): validation itself is what
// an abusive document makes slow. checkRequest (handler.go) does it for both transports. Errors follow
// the GraphQL spec and carry extensions.code from the contract's codes; internal errors
// are logged and never shown.
//
// Subscriptions (taskChanged, messageAdded; subscriptions.go) are served on a WebSocket
// upgrade of GET /graphql with the graphql-transport-ws protocol (ws.go), over the
// stored event stream of backend/events, so they see exactly what /api/events sends.
// Members, agent profiles and token rotation are in domains.go.
//
// The schema's SDL is checked in as schema.graphql; `go generate` rewrites it and a test
// fails when it is stale.
package graphql

//go:generate go run ./cmd/printschema schema.graphql
