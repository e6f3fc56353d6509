package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// The users of a project and their roles (table project_members), and the users
// themselves.

// memberName is the name a project shows for a member: the one it gave when it added
// the person (m.name), until the person signs in; then, and for members without one,
// the person's own (u.name). A project never sees a name another project gave.
const memberName = `COALESCE(m.name, u.name)`

const memberColumns = `m.project_id, u.id, ` + memberName + `, u.email, u.is_owner, m.role, m.created_at, m.updated_at`

const memberFrom = ` FROM project_members m JOIN users u ON u.id = m.user_id`

func scanMember(row interface{ Scan(...any) error }) (*model.Member, error) {
	var m model.Member
	var email sql.NullString
	var created, updated string
	err := row.Scan(&m.ProjectID, &m.UserID, &m.Name, &email, &m.LocalOwner, &m.Role, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if email.Valid {
		m.Email = &email.String
	}
	m.CreatedAt, m.UpdatedAt = parseTime(created), parseTime(updated)
	return &m, nil
}

// Members lists the project's members in the order they joined (as Memberships).
func (r Reader) Members(ctx context.Context, projectID string) ([]model.Member, error) {
	return queryList(ctx, r, scanMember, `SELECT `+memberColumns+memberFrom+` WHERE m.project_id = $1 ORDER BY m.created_at, m.join_order, u.id`, projectID)
}

// Member loads one member of the project by user id.
func (r Reader) Member(ctx context.Context, projectID string, userID int64) (*model.Member, error) {
	return scanMember(r.queryRow(ctx, `SELECT `+memberColumns+memberFrom+` WHERE m.project_id = $1 AND m.user_id = $2`, projectID, userID))
}

// CountMembersWithRole counts the project's members that have role.
func (r Reader) CountMembersWithRole(ctx context.Context, projectID, role string) (int, error) {
	var n int
	err := r.queryRow(ctx, `SELECT COUNT(*) FROM project_members WHERE project_id = $1 AND role = $2`, projectID, role).Scan(&n)
	return n, err
}

// UserByEmail finds a user by (lowercased) email.
func (r Reader) UserByEmail(ctx context.Context, email string) (int64, error) {
	var id int64
	err := r.queryRow(ctx, `SELECT id FROM users WHERE email = $1`, email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return id, err
}

// CountMembersNamed counts the project's members with exactly this name.
func (r Reader) CountMembersNamed(ctx context.Context, projectID, name string) (int, error) {
	var n int
	err := r.queryRow(ctx, `SELECT COUNT(*)`+memberFrom+` WHERE m.project_id = $1 AND `+memberName+` = $2`, projectID, name).Scan(&n)
	return n, err
}

// InsertUser stores a new (not owner) user and returns its id. email may be nil.
func (t *Tx) InsertUser(ctx context.Context, name string, email *string, at time.Time) (int64, error) {
	res, err := t.insert(ctx, `INSERT INTO users (name, email, is_owner, created_at) VALUES ($1, $2, 0, $3)`, name, email, fmtTime(at))
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// InsertMember adds a user to a project with a role; ErrDuplicate if it is a member.
func (t *Tx) InsertMember(ctx context.Context, projectID string, userID int64, role string, at time.Time) error {
	var one int
	err := t.queryRow(ctx, `SELECT 1 FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID).Scan(&one)
	if err == nil {
		return ErrDuplicate
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at, updated_at, join_order)
		VALUES ($1, $2, $3, $4, $5, `+nextJoinOrder+`)`,
		projectID, userID, role, fmtTime(at), fmtTime(at))
	return err
}

// nextJoinOrder is a new membership's join_order: after every other, in the same
// statement. Two servers inserting at once (in different projects, under different
// locks) may compute the same value; the lists then order by id.
const nextJoinOrder = `(SELECT COALESCE(MAX(join_order), 0) + 1 FROM project_members)`

// InsertOwnerMember makes the local owner an owner of the project (a new project).
func (t *Tx) InsertOwnerMember(ctx context.Context, projectID string, at time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at, updated_at, join_order)
		SELECT $1, id, 'owner', $2, $3, `+nextJoinOrder+` FROM users WHERE is_owner = 1
		AND NOT EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = $4 AND m.user_id = users.id)`,
		projectID, fmtTime(at), fmtTime(at), projectID)
	return err
}

// SetMemberName sets the name the project shows for a member until the person signs
// in (see memberName).
func (t *Tx) SetMemberName(ctx context.Context, projectID string, userID int64, name string) error {
	return t.execOne(ctx, `UPDATE project_members SET name = $1 WHERE project_id = $2 AND user_id = $3`, name, projectID, userID)
}

// UpdateMemberRole changes a member's role.
func (t *Tx) UpdateMemberRole(ctx context.Context, projectID string, userID int64, role string, at time.Time) error {
	return t.execOne(ctx, `UPDATE project_members SET role = $1, updated_at = $2 WHERE project_id = $3 AND user_id = $4`,
		role, fmtTime(at), projectID, userID)
}

// DeleteMember removes a user from a project (the user itself stays).
func (t *Tx) DeleteMember(ctx context.Context, projectID string, userID int64) error {
	return t.execOne(ctx, `DELETE FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID)
}
