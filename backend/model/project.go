package model

import "time"

// Project owns agents, tokens, tasks and conversations; nothing crosses projects.
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Namespace   string    `json:"namespace"`
	TokenSecret string    `json:"-"` // shared secret of the project's agents; shown only by the CLI
	CreatedAt   time.Time `json:"created_at"`
}

// Agent is a software agent registered in a project.
type Agent struct {
	ID        int64  `json:"id"`
	ProjectID string `json:"project_id"`
	Name      string `json:"name"`
	// DisplayName and Description are the agent's profile; "" when unset.
	DisplayName string    `json:"display_name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	// LastSeenAt is the agent's last contact (a request or an open event stream), to
	// about 30 seconds; nil when never seen.
	LastSeenAt *time.Time `json:"last_seen_at"`
}

// Token types.
const (
	TokenPlatform = "platform"
	TokenData     = "data"
)

// Token is a stored token; its value is never kept, only a hash and a short hint.
type Token struct {
	ID         int64      `json:"id"`
	ProjectID  string     `json:"project_id"`
	Name       string     `json:"name"`
	Type       string     `json:"type"`
	Scopes     []string   `json:"scopes"`
	Hint       string     `json:"hint"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// CreatedBy is the person who made the token (a session of theirs, or a token they
	// made); nil for tokens of the command line, the desktop window and older versions.
	CreatedBy *UserRef `json:"created_by"`
}

// UserRef names a person where a record says who did something.
type UserRef struct {
	ID    int64   `json:"id"`
	Name  string  `json:"name"`
	Email *string `json:"email"` // null for people added by name only
}

// Event is one stored change, as the events stream will send it.
type Event struct {
	Seq       int64     `json:"seq"`
	Type      string    `json:"type"`
	ProjectID string    `json:"projectId"`
	At        time.Time `json:"at"`
	Data      any       `json:"data"`
}
