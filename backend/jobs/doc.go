// Package jobs runs agentdesk's background work inside the server: the job scheduler,
// which asks the service to run each job when its cron schedule says (and to catch up
// on runs missed while the server was down), and the pruning of old activity. Time
// comes from an injected Clock, so tests can drive a simulated hour in milliseconds.
package jobs
