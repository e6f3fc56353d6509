// Package server runs agentdesk's HTTP service: it opens the store and the service,
// listens, serves the router, and on shutdown lets in-flight requests finish before
// closing the database. --serve and the desktop window both start it.
package server
