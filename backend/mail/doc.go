// Package mail sends email over SMTP: the --smtp-url and --smtp-from settings, parsed
// and checked, and one message at a time sent with them. What is sent, and when, is
// the service's (backend/service/mail.go) and the jobs' (backend/jobs/mail.go).
package mail
