package store

import (
	"context"

	"github.com/agentdesk/agentdesk/backend/model"
)

// UpdateAgentProfile writes an agent's display name and description.
func (t *Tx) UpdateAgentProfile(ctx context.Context, a *model.Agent) error {
	return t.execOne(ctx, `UPDATE agents SET display_name = $1, description = $2 WHERE project_id = $3 AND id = $4`,
		a.DisplayName, a.Description, a.ProjectID, a.ID)
}

// DeleteAgent removes an agent of the project. The database unassigns its tasks, takes
// it out of its conversations and keeps its messages (without the agent link).
func (t *Tx) DeleteAgent(ctx context.Context, projectID string, id int64) error {
	// Its tasks change (agent_id null), so their versions go up (migration 00012).
	if _, err := t.exec(ctx, `UPDATE tasks SET version = version + 1 WHERE project_id = $1 AND agent_id = $2`, projectID, id); err != nil {
		return err
	}
	return t.execOne(ctx, `DELETE FROM agents WHERE project_id = $1 AND id = $2`, projectID, id)
}

// AgentTaskIDs lists the ids of the tasks assigned to an agent, oldest first.
func (r Reader) AgentTaskIDs(ctx context.Context, projectID string, agentID int64) ([]int64, error) {
	return r.ids(ctx, `SELECT id FROM tasks WHERE project_id = $1 AND agent_id = $2 ORDER BY id`, projectID, agentID)
}

// AgentConversationIDs lists the conversations an agent takes part in.
func (r Reader) AgentConversationIDs(ctx context.Context, agentID int64) ([]int64, error) {
	return r.ids(ctx, `SELECT conversation_id FROM conversation_participants WHERE agent_id = $1 ORDER BY conversation_id`, agentID)
}
