package service

import (
	"context"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// SeenEvery is how fresh an agent's last contact is kept: a contact within this long of
// the last one recorded is not recorded again, so a busy agent costs at most one small
// write per this period (issue 20: the UI's online / last seen).
const SeenEvery = 30 * time.Second

// agentSeen notes an agent's contact (an authenticated request, or its open event stream
// still holding). It only touches memory; FlushTokenUse writes it in the background.
func (s *Service) agentSeen(agentID int64, at time.Time) {
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	if last, ok := s.seen[agentID]; ok && at.Sub(last) < SeenEvery {
		return
	}
	s.seen[agentID] = at
	s.seenNew[agentID] = at
}

// flushAgentsSeen writes the contacts noted since the previous flush.
func (s *Service) flushAgentsSeen(ctx context.Context) error {
	s.seenMu.Lock()
	seen := s.seenNew
	s.seenNew = map[int64]time.Time{}
	s.seenMu.Unlock()
	if len(seen) == 0 {
		return nil
	}
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error { return tx.TouchAgents(ctx, seen) })
}

// withSeen sets the agents' last contact to what the service knows and has not written yet.
func (s *Service) withSeen(agents []model.Agent) {
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	for i := range agents {
		if at, ok := s.seenNew[agents[i].ID]; ok {
			agents[i].LastSeenAt = &at
		}
	}
}
