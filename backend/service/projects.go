package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// The project created on first start.
const (
	DefaultProjectName      = "Personal"
	DefaultProjectNamespace = "default"
)

var (
	namespacePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	agentNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// EnsureDefaultProject creates the Personal project and the local owner when the
// database has no project yet. Safe to call from several processes at once: the check
// and the insert share one write transaction.
func (s *Service) EnsureDefaultProject(ctx context.Context) error {
	now := s.clock()
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		if err := tx.InsertOwner(ctx, "owner", now); err != nil {
			return internal("create owner", err)
		}
		projects, err := tx.Projects(ctx)
		if err != nil || len(projects) > 0 {
			return err
		}
		_, err = insertProject(ctx, tx, DefaultProjectName, DefaultProjectNamespace, now)
		return err
	})
}

func insertProject(ctx context.Context, tx *store.Tx, name, namespace string, now time.Time) (*model.Project, error) {
	p := &model.Project{
		ID:          "prj_" + auth.RandomString(16),
		Name:        name,
		Namespace:   namespace,
		TokenSecret: auth.RandomString(40),
		CreatedAt:   now,
	}
	if err := tx.InsertProject(ctx, p); err != nil {
		return nil, internal("create project", err)
	}
	if err := tx.InsertOwnerMember(ctx, p.ID, now); err != nil { // the local owner owns it (members.go)
		return nil, internal("add the owner", err)
	}
	// The record without the agents' secret (TokenSecret is never marshalled).
	if err := tx.AppendEvent(ctx, p.ID, EventProjectCreated, p, now); err != nil {
		return nil, internal("record event", err)
	}
	return p, nil
}

// CreateProject makes a new project. Only the local owner creates projects.
func (s *Service) CreateProject(ctx context.Context, p *auth.Principal, name, namespace string) (*model.Project, error) {
	if p == nil || p.Kind != auth.KindOwner {
		return nil, errs.Forbid("only the local owner creates projects")
	}
	if err := checkText("name", name, true, 200); err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = DefaultProjectNamespace
	}
	if !namespacePattern.MatchString(namespace) {
		return nil, errs.Invalid("namespace %q is not valid: use 1 to 63 lowercase letters, digits and dashes, starting and ending with a letter or digit", namespace)
	}
	var out *model.Project
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) (err error) {
		out, err = insertProject(ctx, tx, name, namespace, s.clock())
		return err
	})
	return out, err
}

// Projects lists the projects the principal can see: its own, or every one for the owner.
func (s *Service) Projects(ctx context.Context, p *auth.Principal) ([]model.Project, error) {
	if p == nil {
		return nil, errs.Unauth("authentication required")
	}
	all, err := s.store.Read().Projects(ctx)
	if err != nil {
		return nil, internal("list projects", err)
	}
	if p.Kind == auth.KindOwner {
		return all, nil
	}
	for _, pr := range all {
		if pr.ID == p.ProjectID {
			return []model.Project{pr}, nil
		}
	}
	return []model.Project{}, nil
}

// project loads a project, 404 when it does not exist.
func (s *Service) project(ctx context.Context, r store.Reader, id string) (*model.Project, error) {
	pr, err := r.Project(ctx, id)
	if err := storeError(err, "load project", func() error { return errs.Missing("project %q not found", id) }); err != nil {
		return nil, err
	}
	return pr, nil
}

// Project loads the principal's project (or, for the owner, any project by id).
func (s *Service) Project(ctx context.Context, p *auth.Principal, id string) (*model.Project, error) {
	if p == nil {
		return nil, errs.Unauth("authentication required")
	}
	if p.Kind != auth.KindOwner && id != p.ProjectID {
		return nil, errs.Missing("project %q not found", id)
	}
	return s.project(ctx, s.store.Read(), id)
}

// CreateAgent registers an agent in the principal's project.
func (s *Service) CreateAgent(ctx context.Context, p *auth.Principal, name string) (*model.Agent, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if !agentNamePattern.MatchString(name) {
		return nil, errs.Invalid("agent name %q is not valid: use 1 to 64 letters, digits, dots, dashes and underscores, starting with a letter or digit", name)
	}
	a := &model.Agent{ProjectID: p.ProjectID, Name: name, CreatedAt: s.clock()}
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if _, err := s.project(ctx, tx.Reader, p.ProjectID); err != nil {
			return err
		}
		err := tx.InsertAgent(ctx, a)
		if errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("an agent named %q already exists in this project", name)
		}
		if err != nil {
			return internal("create agent", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, "agent.created", a, a.CreatedAt)
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Agents lists the agents of the principal's project.
func (s *Service) Agents(ctx context.Context, p *auth.Principal) ([]model.Agent, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	agents, err := s.store.Read().Agents(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list agents", err)
	}
	s.withSeen(agents)
	return agents, nil
}

// EnvVar is one variable of an agent's environment.
type EnvVar struct{ Name, Value string }

// requireSecretAccess is the rule for reading or replacing the project's secret: the
// secret lets its holder act as any agent of the project, so the caller must already
// hold admin and every scope an agent holds. The local owner holds them all.
func requireSecretAccess(p *auth.Principal) error {
	if err := require(p, auth.Admin); err != nil {
		return err
	}
	for _, sc := range auth.AgentScopes {
		if !p.Has(sc) {
			return errs.Forbid("the project's secret lets its holder act as any agent, so it needs admin plus every scope an agent holds (%s); the caller lacks %s",
				strings.Join(auth.AgentScopes, ", "), sc)
		}
	}
	return nil
}

// EventProjectSecretRotated records who replaced the project's secret; its data is the
// project's record, never the secret.
const EventProjectSecretRotated = "project.secret_rotated"

// RotateProjectSecret replaces the principal's project's secret and returns the project
// with the new one. Agents authenticated by the old secret's digest are refused from
// the moment this returns (authentication reads the secret on every request); they
// need the new environment (agentEnv, or the CLI's agent env).
func (s *Service) RotateProjectSecret(ctx context.Context, p *auth.Principal) (*model.Project, error) {
	if err := requireSecretAccess(p); err != nil {
		return nil, err
	}
	now := s.clock()
	var out *model.Project
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		pr, err := s.project(ctx, tx.Reader, p.ProjectID)
		if err != nil {
			return err
		}
		pr.TokenSecret = auth.RandomString(40)
		if err := tx.SetProjectSecret(ctx, pr.ID, pr.TokenSecret); err != nil {
			return internal("replace the project's secret", err)
		}
		out = pr
		return tx.AppendEvent(ctx, pr.ID, EventProjectSecretRotated, pr, now) // TokenSecret is never marshalled
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AgentEnv is the environment an agent process needs to reach agentdesk, in a stable
// order. It holds the project's secret (requireSecretAccess).
func (s *Service) AgentEnv(ctx context.Context, p *auth.Principal, agentName, baseURL string) ([]EnvVar, error) {
	if err := requireSecretAccess(p); err != nil {
		return nil, err
	}
	r := s.store.Read()
	pr, err := s.project(ctx, r, p.ProjectID)
	if err != nil {
		return nil, err
	}
	agent, err := r.AgentByName(ctx, p.ProjectID, agentName)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("no agent named %q in project %s; create it first with: agentdesk agent create --project %s --name %s", agentName, pr.ID, pr.ID, agentName)
	} else if err != nil {
		return nil, internal("load agent", err)
	}
	env := []EnvVar{
		{"SERVICE_NAMESPACE", pr.Namespace},
		{"SERVICE_PROJECT_ID", pr.ID},
		{"SERVICE_TOKEN_SECRET", pr.TokenSecret},
		{"AGENT_NAME", agentName},
		{"SERVICE_API_TOKEN", auth.AgentDigest(pr.ID, pr.TokenSecret)},
		{"AGENTDESK_URL", baseURL},
	}
	// The agent's knowledge bases (vector.go), when spaces are linked to it.
	if spaces, err := s.vector.agentSpaces(ctx, r, agent.ID); err != nil {
		return nil, err
	} else if spaces != "" {
		env = append(env, EnvVar{"AGENTDESK_VECTOR_SPACES", spaces})
	}
	return env, nil
}

// Backup writes a consistent copy of the whole database to path (which must not exist)
// while the service keeps running, and returns the absolute path written. It copies
// every project, so only the local owner may call it.
func (s *Service) Backup(ctx context.Context, p *auth.Principal, path string) (string, error) {
	if p == nil || p.Kind != auth.KindOwner {
		return "", errs.Forbid("only the local owner can back up the database")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", errs.Invalid("backup path %q is not usable: %v", path, err)
	}
	if _, err := os.Stat(abs); err == nil {
		return "", errs.Conflicting("%s already exists; choose a new file name", abs)
	}
	if err := s.store.Backup(ctx, abs); err != nil {
		return "", internal("back up", err)
	}
	return abs, nil
}
