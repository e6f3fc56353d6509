// Package jobs runs all of agentdesk's background work inside the server, in one Runner:
// the job scheduler, which asks the service to run each job when its cron schedule says
// (and to catch up on runs missed while the server was down); the activity trail's
// filling and pruning; writing the tokens' last use; forgetting old events and
// Idempotency-Keys; and, with --smtp-url, emailing new questions to the people they ask
// (mail.go). The service and the event hub offer each as a one-shot operation;
// the Runner decides when. The scheduler and the activity's pruning take their time
// from an injected Clock, so tests can drive a simulated hour in milliseconds; the rest
// runs on real time.
package jobs
