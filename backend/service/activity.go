package service

import (
	"context"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// The activity trail is filled by the store from the event log (store.IndexActivity),
// whose rows carry the actor and interface of the request's context (package audit):
// in the background (package jobs runs IndexActivity every second) and before every
// read, so that a read sees every change acknowledged before it. Here are the reading,
// the filling and the pruning of it.

// DefaultActivityRetention is how long activity is kept unless configured.
const DefaultActivityRetention = 90 * 24 * time.Hour

// ActivityInput filters and pages the activity trail, newest first.
type ActivityInput struct {
	ObjectType string // task, agent, skill, job, budget, conversation, message, ...
	ObjectID   string
	Actor      string // a token's, agent's or job's name, or owner
	Via        string // rest, graphql, ui, cli, job, internal
	Since      *time.Time
	Until      *time.Time
	Before     int64 // only entries older than this entry id
	Limit      int
}

// Activity lists the project's activity, newest first (admin).
func (s *Service) Activity(ctx context.Context, p *auth.Principal, in ActivityInput) ([]model.Activity, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if in.Limit < 1 || in.Limit > MaxListLimit {
		return nil, errs.Invalid("first must be between 1 and %d", MaxListLimit)
	}
	if in.Since != nil && in.Until != nil && !in.Until.After(*in.Since) {
		return nil, errs.Invalid("until must be after since")
	}
	// On a full disk the trail cannot be filled: the read goes on with what it holds.
	if err := s.IndexActivity(ctx); err != nil && !store.IsDiskFull(err) {
		return nil, internal("fill the activity trail", err)
	}
	out, err := s.store.Read().Activity(ctx, store.ActivityFilter{ProjectID: p.ProjectID, ObjectType: in.ObjectType, ObjectID: in.ObjectID,
		Actor: in.Actor, Via: in.Via, Since: in.Since, Until: in.Until, Before: in.Before, Limit: in.Limit})
	if err != nil {
		return nil, internal("list activity", err)
	}
	if err := s.describeChanges(ctx, p.ProjectID, out); err != nil {
		return nil, internal("describe changes", err)
	}
	return out, nil
}

// IndexActivity copies the events not in the activity trail yet into it, in passes of
// at most 10,000 so that other writes interleave. It writes only when some are missing.
func (s *Service) IndexActivity(ctx context.Context) error {
	behind, err := s.store.Read().ActivityBehind(ctx)
	for behind && err == nil {
		err = s.store.Write(ctx, s.author(nil), func(tx *store.Tx) (err error) {
			behind, err = tx.IndexActivity(ctx, 10_000)
			return err
		})
	}
	return err
}

// PruneActivity forgets the activity of every project older than before, in batches
// so that other writes interleave, and says how many entries went. The background
// runner (package jobs) calls it.
func (s *Service) PruneActivity(ctx context.Context, before time.Time) (int64, error) {
	if err := s.IndexActivity(ctx); err != nil { // what is not in the trail yet goes too
		return 0, err
	}
	var total int64
	for {
		var n int64
		err := s.store.Write(ctx, s.author(nil), func(tx *store.Tx) (err error) {
			n, err = tx.PruneActivity(ctx, before, 5000)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < 5000 {
			return total, nil
		}
	}
}
