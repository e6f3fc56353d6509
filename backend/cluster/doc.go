// Package cluster holds the tests of several agentdesk servers on one PostgreSQL
// database (issue 21): in-process servers for the wiring (cluster_test.go), and the
// two-instance test with real processes (twoinstance_test.go). It has no code of its own.
package cluster
