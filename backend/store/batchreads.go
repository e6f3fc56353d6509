package store

import (
	"context"
	"strings"

	"github.com/agentdesk/agentdesk/backend/model"
)

// A write batch keeps the agents and budgets its writes look up, for its later writes:
// creating a task reads its agent and its project's budget, and on PostgreSQL each of
// those reads is a network round trip inside the batch, while no other write can run
// (creates +40% in interleaved runs on PostgreSQL, docs/postgres.md). Likewise the
// conversations a message's write looks up, and the participants it adds.
//
// What may change a kept row while the batch runs:
//   - A statement of the batch itself. Every statement a write runs passes through
//     forgetChangedBy first (Reader.statementContext), which forgets everything unless
//     the statement cannot change a kept row: a SELECT, a savepoint, an INSERT or UPDATE
//     that names none of their tables, or an INSERT of participants that adds only (no
//     DO UPDATE). (No trigger writes those tables, and only a DELETE cascades.) A write
//     rolled back to its savepoint forgets too.
//   - Another process. On SQLite none can write while the batch holds the write lock.
//     On PostgreSQL another server changes a project's agents, budget and conversations
//     only in a batch holding the project's lock, which this batch holds from its first write in the
//     project to its commit (postgres_seq.go). An agent's last contact (last_seen_at) is
//     the exception: it may be a few milliseconds old, as if read as the batch began.
type keptRows struct {
	agents  map[keptAgent]model.Agent
	budgets map[string]*model.Budget // nil: the project has no budget
	// A project's conversation id by the reference a write gave (its id or uuid).
	conversations map[keptConversation]int64
	participants  map[keptParticipant]bool // known to be in their conversation
}

type keptConversation struct{ project, ref string }

type keptParticipant struct {
	conversation int64
	kind, name   string
}

type keptAgent struct {
	project string
	id      int64
}

// forgetChangedBy forgets every kept row unless query (whose first word is verb)
// cannot change one.
func (k *keptRows) forgetChangedBy(verb, query string) {
	if k == nil || (k.agents == nil && k.budgets == nil && k.conversations == nil && k.participants == nil) {
		return
	}
	switch {
	case strings.EqualFold(verb, "SELECT"), strings.EqualFold(verb, "SAVEPOINT"), strings.EqualFold(verb, "RELEASE"):
		return
	case strings.EqualFold(verb, "INSERT"), strings.EqualFold(verb, "UPDATE"):
		names := func(table string) bool { return strings.Contains(query, table) }
		changesParticipants := names("conversation_participants") &&
			(strings.EqualFold(verb, "UPDATE") || strings.Contains(query, "DO UPDATE"))
		if !names("agents") && !names("budgets") && !names("conversations") && !changesParticipants {
			return
		}
	}
	*k = keptRows{}
}

// Agent loads an agent of the project, as Reader.Agent does, once per batch.
func (t *Tx) Agent(ctx context.Context, projectID string, id int64) (*model.Agent, error) {
	k := t.b.kept
	if a, ok := k.agents[keptAgent{projectID, id}]; ok {
		return copyAgent(a), nil
	}
	a, err := t.Reader.Agent(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if k.agents == nil {
		k.agents = map[keptAgent]model.Agent{}
	}
	k.agents[keptAgent{projectID, id}] = *copyAgent(*a)
	return a, nil
}

func copyAgent(a model.Agent) *model.Agent {
	if a.LastSeenAt != nil {
		at := *a.LastSeenAt
		a.LastSeenAt = &at
	}
	return &a
}

// Budget loads the project's budget, as Reader.Budget does, once per batch.
func (t *Tx) Budget(ctx context.Context, projectID string) (*model.Budget, error) {
	k := t.b.kept
	if b, ok := k.budgets[projectID]; ok {
		if b == nil {
			return nil, ErrNotFound
		}
		c := *b
		return &c, nil
	}
	b, err := t.Reader.Budget(ctx, projectID)
	var keep *model.Budget
	switch {
	case err == nil:
		c := *b
		keep = &c
	case err != ErrNotFound:
		return nil, err
	}
	if k.budgets == nil {
		k.budgets = map[string]*model.Budget{}
	}
	k.budgets[projectID] = keep
	return b, err
}

// ConversationID finds a conversation of the project, as Reader.ConversationID does,
// once per batch.
func (t *Tx) ConversationID(ctx context.Context, projectID, ref string) (int64, error) {
	k := t.b.kept
	key := keptConversation{projectID, ref}
	if id, ok := k.conversations[key]; ok {
		return id, nil
	}
	id, err := t.Reader.ConversationID(ctx, projectID, ref)
	if err != nil {
		return 0, err
	}
	if k.conversations == nil {
		k.conversations = map[keptConversation]int64{}
	}
	k.conversations[key] = id
	return id, nil
}

// AddParticipant makes p a participant of the conversation; added is false when it
// already was one (a participant is identified by its kind and name). A participant
// the batch has added or found is not looked for again.
func (t *Tx) AddParticipant(ctx context.Context, conversationID int64, p model.Participant) (added bool, err error) {
	key := keptParticipant{conversationID, p.Kind, p.Name}
	if t.b.kept.participants[key] {
		return false, nil
	}
	if added, err = t.insertParticipant(ctx, conversationID, p); err != nil {
		return false, err
	}
	k := t.b.kept // after the INSERT: statementContext may have forgotten before it
	if k.participants == nil {
		k.participants = map[keptParticipant]bool{}
	}
	k.participants[key] = true
	return added, nil
}
