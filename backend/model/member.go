package model

import "time"

// Member roles, from the most to the least powerful.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleViewer = "viewer"
)

// MemberRoles lists the roles, most powerful first.
var MemberRoles = []string{RoleOwner, RoleAdmin, RoleMember, RoleViewer}

// Member is a user of a project with a role there.
type Member struct {
	ProjectID  string    `json:"projectId"`
	UserID     int64     `json:"userId"`
	Name       string    `json:"name"`
	Email      *string   `json:"email"`        // null for users added by name only
	LocalOwner bool      `json:"isLocalOwner"` // the machine's own user (CLI, desktop window)
	Role       string    `json:"role"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"` // when the role last changed
}
