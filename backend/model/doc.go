// Package model holds agentdesk's domain records and their wire form: the store fills
// them, the service returns them, and REST encodes them as they are. Fields that are
// derived from others (is_active, current_step_num, ...) are set by Derive, never stored.
package model
