package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// TestFailureLimiterBounds: the limiter tracks at most maxTrackedAddresses addresses,
// forgetting the least recently failed first, and forgets an address once its
// failures have left the window.
func TestFailureLimiterBounds(t *testing.T) {
	l := newFailureLimiter()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range FailureLimit {
		l.count("198.51.100.1", now)
	}
	if err := l.admit("198.51.100.1", now); errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("over the limit: %v", err)
	}
	for i := range maxTrackedAddresses {
		l.count(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), now.Add(time.Second))
	}
	if len(l.byAddr) != maxTrackedAddresses || l.order.Len() != maxTrackedAddresses {
		t.Fatalf("tracking %d (%d) addresses, want %d", len(l.byAddr), l.order.Len(), maxTrackedAddresses)
	}
	if err := l.admit("198.51.100.1", now.Add(time.Second)); err != nil {
		t.Fatalf("the least recently failed address is not forgotten: %v", err)
	}
	l.count("192.0.2.1", now.Add(time.Second+FailureWindow))
	if len(l.byAddr) != 1 {
		t.Fatalf("after the window, %d addresses tracked, want only the new one", len(l.byAddr))
	}
	for _, addr := range []string{"", "127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"} {
		for range 2 * FailureLimit {
			l.count(addr, now)
		}
		if err := l.admit(addr, now); err != nil {
			t.Errorf("%q is limited: %v", addr, err)
		}
	}
}
