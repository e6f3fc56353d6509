// Package events streams stored changes to subscribers. Every change writes its event
// row in its own transaction; the hub is woken by each commit, reads what is new from
// the stored log and fans it out, so replay (?since=SEQ) and live delivery are the same
// path, and events written by another process (the CLI) arrive too.
package events
