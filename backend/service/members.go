package service

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Members: the users of a project and their roles. A role bounds what its user may do:
// RoleScopes maps it to the scopes a session of that user holds, so that a browser
// session (team mode, team.go) never does more than its role allows.
//
// Rules, all here:
//   - listing members needs any platform scope of the project (every role has one);
//   - adding, changing and removing members needs admin;
//   - only an owner makes, unmakes or removes owners (today: the local owner, i.e. the
//     CLI and the desktop window; tokens act as admins at most);
//   - the last owner of a project can be neither removed nor demoted.

// Event types of members; only callers with admin receive them on the stream.
const (
	EventMemberAdded   = "member.added"
	EventMemberUpdated = "member.updated"
	EventMemberRemoved = "member.removed"
)

// Bounds on member input.
const (
	MaxUserNameLen = 200
	MaxEmailLen    = 254
)

var roleScopes = map[string][]string{
	model.RoleViewer: {auth.TaskRead, auth.MessagingRead},
	model.RoleMember: {auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite},
	model.RoleAdmin:  {auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite, auth.Admin},
	model.RoleOwner:  {auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite, auth.Admin},
}

// RoleScopes is what a member of the role may do: viewer task:read and messaging:read;
// member also task:write and messaging:write; admin and owner also admin (owners, in
// addition, manage owners). Nil for an unknown role.
func RoleScopes(role string) []string { return slices.Clone(roleScopes[role]) }

func checkRole(role string) error {
	if _, ok := roleScopes[role]; !ok {
		return errs.Invalid("role %q is not a member role; use one of %s", role, strings.Join(model.MemberRoles, ", "))
	}
	return nil
}

// actsAsOwner reports whether the caller may manage owners: the local owner, and a
// signed-in person whose role in the project is owner.
func actsAsOwner(p *auth.Principal) bool {
	return p != nil && (p.Kind == auth.KindOwner || p.Kind == auth.KindUser && p.Role == model.RoleOwner)
}

// Members lists the users of the principal's project, in the order they joined.
func (s *Service) Members(ctx context.Context, p *auth.Principal) ([]model.Member, error) {
	if p == nil {
		return nil, errs.Unauth("authentication required")
	}
	if !p.Has(auth.TaskRead) && !p.Has(auth.MessagingRead) && !p.Has(auth.Admin) {
		return nil, require(p, auth.TaskRead)
	}
	ms, err := s.store.Read().Members(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list members", err)
	}
	return ms, nil
}

// AddMemberInput names a user, by email or by name, and the role to give it.
type AddMemberInput struct {
	Name  string
	Email string
	Role  string
}

// AddMember adds a user to the principal's project. A user with that email is reused;
// without an email, a name already among the project's members is a conflict and any
// other name makes a new user (users of other projects are never matched by name).
// The project knows the person by the name given here (or the email's local part)
// until they sign in: never by a name another project gave.
func (s *Service) AddMember(ctx context.Context, p *auth.Principal, in AddMemberInput) (*model.Member, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if err := checkRole(in.Role); err != nil {
		return nil, err
	}
	if in.Role == model.RoleOwner && !actsAsOwner(p) {
		return nil, errs.Forbid("only an owner can make a member owner; add the user as admin, or ask an owner")
	}
	in.Name = strings.TrimSpace(in.Name)
	in.Email = strings.ToLower(strings.TrimSpace(in.Email))
	if in.Name == "" && in.Email == "" {
		return nil, errs.Invalid("give the user's email or name")
	}
	if in.Email != "" {
		addr, err := mail.ParseAddress(in.Email)
		if err != nil || addr.Address != in.Email || len(in.Email) > MaxEmailLen {
			return nil, errs.Invalid("email %q is not a valid email address", in.Email)
		}
		if in.Name == "" {
			in.Name = in.Email[:strings.IndexByte(in.Email, '@')]
		}
	}
	if err := checkText("name", in.Name, true, MaxUserNameLen); err != nil {
		return nil, err
	}
	now := s.clock()
	var out *model.Member
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if _, err := s.project(ctx, tx.Reader, p.ProjectID); err != nil {
			return err
		}
		userID, err := s.findOrCreateUser(ctx, tx, p.ProjectID, in, now)
		if err != nil {
			return err
		}
		err = tx.InsertMember(ctx, p.ProjectID, userID, in.Role, now)
		if errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("%s is already a member of this project; change the role instead", in.Name)
		}
		if err != nil {
			return internal("add member", err)
		}
		if err := tx.SetMemberName(ctx, p.ProjectID, userID, in.Name); err != nil {
			return internal("name member", err)
		}
		if out, err = s.loadMember(ctx, tx.Reader, p.ProjectID, userID); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventMemberAdded, out, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) findOrCreateUser(ctx context.Context, tx *store.Tx, projectID string, in AddMemberInput, now time.Time) (int64, error) {
	var email *string
	if in.Email != "" {
		id, err := tx.UserByEmail(ctx, in.Email)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return 0, internal("find user", err)
		}
		email = &in.Email
	} else {
		// A name is no identity: it is matched only among this project's members, so
		// that users known only to other projects stay invisible (their emails, how
		// many share a name). A name new to the project makes a new user.
		n, err := tx.CountMembersNamed(ctx, projectID, in.Name)
		if err != nil {
			return 0, internal("find member", err)
		}
		if n > 0 {
			return 0, errs.Conflicting("%s is already a member of this project; change the role instead, or add another person by email", in.Name)
		}
	}
	id, err := tx.InsertUser(ctx, in.Name, email, now)
	if err != nil {
		return 0, internal("create user", err)
	}
	return id, nil
}

func (s *Service) loadMember(ctx context.Context, r store.Reader, projectID string, userID int64) (*model.Member, error) {
	m, err := r.Member(ctx, projectID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("user %d is not a member of this project", userID)
	}
	if err != nil {
		return nil, internal("load member", err)
	}
	return m, nil
}

// checkOwnerChange refuses a change that takes the owner role away from m: by anyone
// but an owner, or from the project's last owner.
func (s *Service) checkOwnerChange(ctx context.Context, tx *store.Tx, p *auth.Principal, m *model.Member, what string) error {
	if m.Role != model.RoleOwner {
		return nil
	}
	n, err := tx.CountMembersWithRole(ctx, m.ProjectID, model.RoleOwner)
	if err != nil {
		return internal("count owners", err)
	}
	if n <= 1 {
		return errs.Conflicting("%s is the project's last owner and cannot be %s; make another member owner first", m.Name, what)
	}
	if !actsAsOwner(p) {
		return errs.Forbid("only an owner can change or remove an owner")
	}
	return nil
}

// SetMemberRole changes a member's role, and revokes the tokens the member made that
// hold a scope the new role does not.
func (s *Service) SetMemberRole(ctx context.Context, p *auth.Principal, userID int64, role string) (*model.Member, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if err := checkRole(role); err != nil {
		return nil, err
	}
	now := s.clock()
	var out *model.Member
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		m, err := s.loadMember(ctx, tx.Reader, p.ProjectID, userID)
		if err != nil {
			return err
		}
		if m.Role == role {
			out = m
			return nil
		}
		if role == model.RoleOwner && !actsAsOwner(p) {
			return errs.Forbid("only an owner can make a member owner")
		}
		if err := s.checkOwnerChange(ctx, tx, p, m, "demoted"); err != nil {
			return err
		}
		if err := tx.UpdateMemberRole(ctx, p.ProjectID, userID, role, now); err != nil {
			return internal("change role", err)
		}
		if err := s.revokeTokensBeyond(ctx, tx, p.ProjectID, userID, roleScopes[role], now); err != nil {
			return err
		}
		if out, err = s.loadMember(ctx, tx.Reader, p.ProjectID, userID); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventMemberUpdated, out, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// revokeTokensBeyond revokes the tokens userID made in the project that carry a scope
// the person may no longer grant with the scopes held (nil: removed from the project).
// It runs in the write that changes their membership, so that a token never does more
// than its maker may: revoked like any other, it is refused everywhere at once and its
// open sockets close.
func (s *Service) revokeTokensBeyond(ctx context.Context, tx *store.Tx, projectID string, userID int64, held []string, now time.Time) error {
	toks, err := tx.LiveTokensMadeBy(ctx, projectID, userID)
	if err != nil {
		return internal("list the member's tokens", err)
	}
	for _, tok := range toks {
		if !slices.ContainsFunc(tok.Scopes, func(sc string) bool { return !mayGrant(held, tok.Type, sc) }) {
			continue
		}
		if err := tx.RevokeToken(ctx, projectID, tok.ID, now); err != nil {
			return internal("revoke token", err)
		}
		if err := tx.AppendEvent(ctx, projectID, EventTokenRevoked, map[string]int64{"id": tok.ID}, now); err != nil {
			return err
		}
	}
	return nil
}

// RemoveMember takes a user out of the principal's project (the user remains, for
// other projects) and revokes the tokens they made there.
func (s *Service) RemoveMember(ctx context.Context, p *auth.Principal, userID int64) error {
	if err := require(p, auth.Admin); err != nil {
		return err
	}
	now := s.clock()
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		m, err := s.loadMember(ctx, tx.Reader, p.ProjectID, userID)
		if err != nil {
			return err
		}
		if err := s.checkOwnerChange(ctx, tx, p, m, "removed"); err != nil {
			return err
		}
		if err := tx.DeleteMember(ctx, p.ProjectID, userID); err != nil {
			return internal("remove member", err)
		}
		if err := s.revokeTokensBeyond(ctx, tx, p.ProjectID, userID, nil, now); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventMemberRemoved, map[string]int64{"userId": userID}, now)
	})
}
