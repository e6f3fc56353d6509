package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/agentdesk/agentdesk/backend/model"
)

func parseSkillNames(raw string) ([]string, error) {
	if raw == "" || raw == "[]" {
		return []string{}, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(raw), &names); err != nil {
		return nil, err
	}
	return names, nil
}

const skillColumns = `id, project_id, name, description, created_at, updated_at`

func scanSkill(row interface{ Scan(...any) error }) (*model.Skill, error) {
	var s model.Skill
	var created, updated string
	err := row.Scan(&s.ID, &s.ProjectID, &s.Name, &s.Description, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = parseTime(created), parseTime(updated)
	return &s, nil
}

// InsertSkill stores a new skill and sets its id; a name taken in the project is ErrDuplicate.
func (t *Tx) InsertSkill(ctx context.Context, s *model.Skill) error {
	if _, err := t.SkillByName(ctx, s.ProjectID, s.Name); err == nil {
		return ErrDuplicate
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	res, err := t.insert(ctx, `INSERT INTO skills (project_id, name, description, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)`,
		s.ProjectID, s.Name, s.Description, fmtTime(s.CreatedAt), fmtTime(s.UpdatedAt))
	if err != nil {
		return err
	}
	s.ID, err = res.LastInsertId()
	return err
}

// UpdateSkill writes a skill's name and description; a name taken by another skill is ErrDuplicate.
func (t *Tx) UpdateSkill(ctx context.Context, s *model.Skill) error {
	if other, err := t.SkillByName(ctx, s.ProjectID, s.Name); err == nil && other.ID != s.ID {
		return ErrDuplicate
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	_, err := t.exec(ctx, `UPDATE skills SET name = $1, description = $2, updated_at = $3 WHERE id = $4 AND project_id = $5`,
		s.Name, s.Description, fmtTime(s.UpdatedAt), s.ID, s.ProjectID)
	if err != nil {
		return err
	}
	return t.bumpTasksRequiring(ctx, s.ID)
}

// DeleteSkill removes a skill of the project; agents lose it and tasks stop requiring it.
func (t *Tx) DeleteSkill(ctx context.Context, projectID string, id int64) error {
	if err := t.bumpTasksRequiring(ctx, id); err != nil {
		return err
	}
	return t.execOne(ctx, `DELETE FROM skills WHERE id = $1 AND project_id = $2`, id, projectID)
}

// bumpTasksRequiring bumps the versions of the tasks that require a skill, whose
// required_skills change with it (migration 00012).
func (t *Tx) bumpTasksRequiring(ctx context.Context, skillID int64) error {
	_, err := t.exec(ctx, `UPDATE tasks SET version = version + 1 WHERE id IN (SELECT task_id FROM task_skills WHERE skill_id = $1)`, skillID)
	return err
}

// Skill loads a skill of the project by id.
func (r Reader) Skill(ctx context.Context, projectID string, id int64) (*model.Skill, error) {
	return scanSkill(r.queryRow(ctx, `SELECT `+skillColumns+` FROM skills WHERE project_id = $1 AND id = $2`, projectID, id))
}

// SkillByName loads a skill of the project by name.
func (r Reader) SkillByName(ctx context.Context, projectID, name string) (*model.Skill, error) {
	return scanSkill(r.queryRow(ctx, `SELECT `+skillColumns+` FROM skills WHERE project_id = $1 AND name = $2`, projectID, name))
}

// Skills lists the project's skills by name.
func (r Reader) Skills(ctx context.Context, projectID string) ([]model.Skill, error) {
	return queryList(ctx, r, scanSkill, `SELECT `+skillColumns+` FROM skills WHERE project_id = $1 ORDER BY name`, projectID)
}

// AttachSkill gives an agent a skill; attaching it twice changes nothing. It reports
// whether the agent did not have it yet.
func (t *Tx) AttachSkill(ctx context.Context, agentID, skillID int64) (bool, error) {
	res, err := t.exec(ctx, `INSERT INTO agent_skills (agent_id, skill_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, agentID, skillID)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// DetachSkill takes a skill from an agent and reports whether it had it.
func (t *Tx) DetachSkill(ctx context.Context, agentID, skillID int64) (bool, error) {
	res, err := t.exec(ctx, `DELETE FROM agent_skills WHERE agent_id = $1 AND skill_id = $2`, agentID, skillID)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// AgentSkills gives the skills of every agent of the project that has any, by agent id,
// each sorted by name: one query for the whole project.
func (r Reader) AgentSkills(ctx context.Context, projectID string) (map[int64][]model.Skill, error) {
	rows, err := r.query(ctx,
		`SELECT a.agent_id, s.id, s.project_id, s.name, s.description, s.created_at, s.updated_at
		 FROM skills s JOIN agent_skills a ON a.skill_id = s.id WHERE s.project_id = $1 ORDER BY a.agent_id, s.name`, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]model.Skill{}
	for rows.Next() {
		var agentID int64
		var s model.Skill
		var created, updated string
		if err := rows.Scan(&agentID, &s.ID, &s.ProjectID, &s.Name, &s.Description, &created, &updated); err != nil {
			return nil, err
		}
		s.CreatedAt, s.UpdatedAt = parseTime(created), parseTime(updated)
		out[agentID] = append(out[agentID], s)
	}
	return out, rows.Err()
}

// SkillsByName resolves skill names of the project to skills; names not found are
// returned in missing, in the order given.
func (r Reader) SkillsByName(ctx context.Context, projectID string, names []string) (found []model.Skill, missing []string, err error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	args := make([]any, 0, len(names)+1)
	args = append(args, projectID)
	for _, n := range names {
		args = append(args, n)
	}
	rows, err := r.query(ctx, `SELECT `+skillColumns+` FROM skills WHERE project_id = $1 AND name IN (`+params(2, len(names))+`) ORDER BY name`, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		s, err := scanSkill(rows)
		if err != nil {
			return nil, nil, err
		}
		found = append(found, *s)
		have[s.Name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	for _, n := range names {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	return found, missing, nil
}

// SetTaskSkills records the skills a task requires.
func (t *Tx) SetTaskSkills(ctx context.Context, taskID int64, skillIDs []int64) error {
	for _, id := range skillIDs {
		if _, err := t.exec(ctx, `INSERT INTO task_skills (task_id, skill_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, taskID, id); err != nil {
			return err
		}
	}
	return nil
}

// AgentsWithSkill lists the ids of the project's agents that have the skill, the one
// with the fewest open tasks (Todo, Doing, Waiting) first, then by id: a deterministic pick.
func (r Reader) AgentsWithSkill(ctx context.Context, projectID string, skillID int64) ([]int64, error) {
	rows, err := r.query(ctx,
		`SELECT a.id FROM agents a JOIN agent_skills k ON k.agent_id = a.id AND k.skill_id = $1
		 WHERE a.project_id = $2
		 ORDER BY (SELECT COUNT(*) FROM tasks t WHERE t.agent_id = a.id AND t.status IN ('Todo', 'Doing', 'Waiting')), a.id`,
		skillID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
