package service

import (
	"context"
	"time"
)

// WebhookLag is the age of the oldest event an enabled webhook has still to be sent
// (0 when every webhook is up to date): how far the deliveries are behind.
func (s *Service) WebhookLag(ctx context.Context) (time.Duration, error) {
	at, ok, err := s.store.Read().OldestUndelivered(ctx)
	if err != nil {
		return 0, internal("read webhook lag", err)
	}
	if !ok {
		return 0, nil
	}
	return max(s.clock().Sub(at), 0), nil
}
