package service

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Bounds on skills.
const (
	MaxSkillNameLen        = 64
	MaxSkillDescriptionLen = 2000
	MaxRequiredSkills      = 20
)

// Event types of skills. Attaching a skill to an agent changes the agent.
const (
	EventSkillCreated      = "skill.created"
	EventSkillUpdated      = "skill.updated"
	EventSkillDeleted      = "skill.deleted"
	EventAgentSkillAdded   = "agent.skill_added"
	EventAgentSkillRemoved = "agent.skill_removed"
)

func checkSkillName(field, name string) error {
	if err := checkText(field, name, true, MaxSkillNameLen); err != nil {
		return err
	}
	if strings.TrimSpace(name) != name {
		return errs.Invalid("%s %q must not start or end with spaces", field, name)
	}
	return nil
}

// Skills lists the project's skills by name (task:read).
func (s *Service) Skills(ctx context.Context, p *auth.Principal) ([]model.Skill, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	out, err := s.store.Read().Skills(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list skills", err)
	}
	return out, nil
}

// AgentSkills gives every agent's skills, by agent id, in one query (task:read).
func (s *Service) AgentSkills(ctx context.Context, p *auth.Principal) (map[int64][]model.Skill, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	out, err := s.store.Read().AgentSkills(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("load agent skills", err)
	}
	return out, nil
}

// CreateSkill adds a skill to the project (admin).
func (s *Service) CreateSkill(ctx context.Context, p *auth.Principal, name, description string) (*model.Skill, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if err := errors.Join(checkSkillName("name", name), checkText("description", description, false, MaxSkillDescriptionLen)); err != nil {
		return nil, firstErr(err)
	}
	now := s.clock()
	sk := &model.Skill{ProjectID: p.ProjectID, Name: name, Description: description, CreatedAt: now, UpdatedAt: now}
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if err := tx.InsertSkill(ctx, sk); errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("a skill named %q already exists in this project", name)
		} else if err != nil {
			return internal("create skill", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventSkillCreated, sk, now)
	})
	if err != nil {
		return nil, err
	}
	return sk, nil
}

// firstErr is the first error of an errors.Join (or err itself).
func firstErr(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := j.Unwrap(); len(errs) > 0 {
			return errs[0]
		}
	}
	return err
}

// UpdateSkill renames a skill or changes its description (admin); nil leaves a field as is.
func (s *Service) UpdateSkill(ctx context.Context, p *auth.Principal, id int64, name, description *string) (*model.Skill, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if name != nil {
		if err := checkSkillName("name", *name); err != nil {
			return nil, err
		}
	}
	if description != nil {
		if err := checkText("description", *description, false, MaxSkillDescriptionLen); err != nil {
			return nil, err
		}
	}
	now := s.clock()
	var sk *model.Skill
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		var err error
		if sk, err = s.loadSkill(ctx, tx.Reader, p.ProjectID, id); err != nil {
			return err
		}
		if name != nil {
			sk.Name = *name
		}
		if description != nil {
			sk.Description = *description
		}
		sk.UpdatedAt = now
		if err := tx.UpdateSkill(ctx, sk); errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("a skill named %q already exists in this project", sk.Name)
		} else if err != nil {
			return internal("update skill", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventSkillUpdated, sk, now)
	})
	if err != nil {
		return nil, err
	}
	return sk, nil
}

// DeleteSkill removes a skill (admin): agents lose it, tasks stop requiring it, jobs
// that picked their agent by it pick none.
func (s *Service) DeleteSkill(ctx context.Context, p *auth.Principal, id int64) error {
	if err := require(p, auth.Admin); err != nil {
		return err
	}
	now := s.clock()
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		sk, err := s.loadSkill(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteSkill(ctx, p.ProjectID, id); err != nil {
			return internal("delete skill", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventSkillDeleted, map[string]any{"id": id, "name": sk.Name}, now)
	})
}

func (s *Service) loadSkill(ctx context.Context, r store.Reader, projectID string, id int64) (*model.Skill, error) {
	sk, err := r.Skill(ctx, projectID, id)
	if err := storeError(err, "load skill", func() error { return errs.Missing("skill %d not found", id) }); err != nil {
		return nil, err
	}
	return sk, nil
}

// SetAgentSkill attaches a skill to an agent, or detaches it (admin). Either is a no-op
// when already so. It returns the agent's skills afterwards.
func (s *Service) SetAgentSkill(ctx context.Context, p *auth.Principal, agentID, skillID int64, attach bool) (*model.Agent, []model.Skill, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, nil, err
	}
	now := s.clock()
	var agent *model.Agent
	var skills []model.Skill
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		a, err := tx.Agent(ctx, p.ProjectID, agentID)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("agent %d not found", agentID)
		}
		if err != nil {
			return internal("load agent", err)
		}
		agent = a
		sk, err := s.loadSkill(ctx, tx.Reader, p.ProjectID, skillID)
		if err != nil {
			return err
		}
		var changed bool
		typ := EventAgentSkillAdded
		if attach {
			changed, err = tx.AttachSkill(ctx, agentID, skillID)
		} else {
			typ = EventAgentSkillRemoved
			changed, err = tx.DetachSkill(ctx, agentID, skillID)
		}
		if err != nil {
			return internal("change agent skills", err)
		}
		all, err := tx.AgentSkills(ctx, p.ProjectID)
		if err != nil {
			return internal("load agent skills", err)
		}
		skills = all[agentID]
		if skills == nil {
			skills = []model.Skill{}
		}
		if !changed {
			return nil
		}
		return tx.AppendEvent(ctx, p.ProjectID, typ, map[string]any{"id": agentID, "name": a.Name, "skillId": sk.ID, "skill": sk.Name}, now)
	})
	if err != nil {
		return nil, nil, err
	}
	return agent, skills, nil
}

// checkRequiredSkills validates the names a new task requires: known skills of the
// project, no more than MaxRequiredSkills. It returns them sorted, without repeats,
// with their ids.
func checkRequiredSkills(ctx context.Context, r store.Reader, projectID string, names []string) ([]string, []int64, error) {
	if len(names) > MaxRequiredSkills {
		return nil, nil, errs.Invalid("too many required_skills: %d, at most %d", len(names), MaxRequiredSkills)
	}
	uniq := make([]string, 0, len(names))
	for i, n := range names {
		if err := checkSkillName("required_skills["+itoa(i)+"]", n); err != nil {
			return nil, nil, err
		}
		if !slices.Contains(uniq, n) {
			uniq = append(uniq, n)
		}
	}
	if len(uniq) == 0 {
		return []string{}, nil, nil
	}
	found, missing, err := r.SkillsByName(ctx, projectID, uniq)
	if err != nil {
		return nil, nil, internal("load skills", err)
	}
	if len(missing) > 0 {
		return nil, nil, errs.Invalid("required_skills: %s not a skill of this project; create it first (createSkill)", quoteList(missing, "is", "are"))
	}
	ids := make([]int64, len(found))
	sorted := make([]string, len(found))
	for i, sk := range found {
		ids[i], sorted[i] = sk.ID, sk.Name
	}
	return sorted, ids, nil
}

// checkAgentSkills fails with a clear 400 when the agent lacks any of the required skills.
func checkAgentSkills(ctx context.Context, r store.Reader, agent *model.Agent, required []string) error {
	if len(required) == 0 {
		return nil
	}
	all, err := r.AgentSkills(ctx, agent.ProjectID)
	if err != nil {
		return internal("load agent skills", err)
	}
	var lacking []string
	for _, name := range required {
		if !slices.ContainsFunc(all[agent.ID], func(s model.Skill) bool { return s.Name == name }) {
			lacking = append(lacking, name)
		}
	}
	if len(lacking) > 0 {
		noun := "skill"
		if len(lacking) > 1 {
			noun = "skills"
		}
		return errs.Invalid("agent %q lacks the required %s %s; attach it to the agent (attachSkill) or choose an agent that has it", agent.Name, noun, quoteList(lacking, "", ""))
	}
	return nil
}

// quoteList writes names as "a", "b" and "c", followed by the verb for one or many.
func quoteList(names []string, one, many string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	s := q[0]
	if len(q) > 1 {
		s = strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
	}
	verb := one
	if len(q) > 1 {
		verb = many
	}
	if verb != "" {
		s += " " + verb
	}
	return s
}

// prepareTaskSkills resolves a new task's required skills and, when it has an agent,
// checks that the agent has them. Called by insertTask before the task is stored.
func prepareTaskSkills(ctx context.Context, tx *store.Tx, task *model.Task, names []string, agent *model.Agent) ([]int64, error) {
	sorted, ids, err := checkRequiredSkills(ctx, tx.Reader, task.ProjectID, names)
	if err != nil {
		return nil, err
	}
	if agent != nil {
		if err := checkAgentSkills(ctx, tx.Reader, agent, sorted); err != nil {
			return nil, err
		}
	}
	task.RequiredSkills = sorted
	return ids, nil
}

// newTaskRules applies the platform's rules to a task about to be stored (insertTask
// calls it with the task's agent, already loaded, or nil): the required skills, which the agent must have,
// the source a job gives, and the monthly budget, which holds an agent's new task in
// Backlog once spent. It returns the ids of the required skills, to store with the task.
func (s *Service) newTaskRules(ctx context.Context, tx *store.Tx, task *model.Task, agent *model.Agent, budget *model.Budget, in CreateTaskInput, now time.Time) ([]int64, error) {
	if in.source != "" {
		task.Source = in.source
	}
	ids, err := prepareTaskSkills(ctx, tx, task, in.RequiredSkills, agent)
	if err != nil {
		return nil, err
	}
	if agent != nil && task.Status == model.StatusTodo {
		reason, err := s.budgetHold(ctx, tx, task.ProjectID, budget, now) // usage.go
		if err != nil {
			return nil, err
		}
		if reason != "" {
			task.Status, task.BlockedReason = model.StatusBacklog, reason
		}
	}
	return ids, nil
}
