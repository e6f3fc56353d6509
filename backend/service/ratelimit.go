package service

import (
	"container/list"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// Refused credentials and failed sign-ins are rate-limited per client address (the
// contract's "429 with Retry-After"). The policy, a sliding window:
//
//   - a failure is a credential Authenticate refuses as unauthenticated (wrong, unknown,
//     revoked or expired token, agent digest or session cookie; a request with no
//     credential at all is not one: every signed-out browser sends those, and they
//     guess nothing), or a sign-in that fails at /auth/callback;
//   - an address with FailureLimit failures within the last FailureWindow is answered
//     429 rate_limited, with Retry-After until its oldest failure leaves the window, on
//     every request that presents a credential and at /login and /auth/callback,
//     before anything is checked: guessing learns nothing meanwhile;
//   - loopback addresses (agents and scripts on this machine) and requests that came
//     through no network are never limited: a token is 256 random bits, so the limit
//     is against noise from the network, not a defence of the tokens. Behind a reverse
//     proxy on this machine, --trusted-proxies must name it, or every client looks like
//     loopback and nobody is limited;
//   - at most maxTrackedAddresses addresses are tracked; past that, the one whose last
//     failure is oldest is forgotten. An address leaves once its failures are older
//     than the window.
const (
	FailureLimit        = 10
	FailureWindow       = time.Minute
	maxTrackedAddresses = 10_000
)

// failureLimiter counts failures per address. Its list holds the tracked addresses,
// least recently failed first, so expiry and eviction take from the front.
type failureLimiter struct {
	mu     sync.Mutex
	byAddr map[string]*list.Element // value: *addressFailures
	order  list.List
}

type addressFailures struct {
	addr  string
	times []time.Time // oldest first, at most FailureLimit
}

func newFailureLimiter() *failureLimiter {
	return &failureLimiter{byAddr: map[string]*list.Element{}}
}

// exempt: no address (no network) or a loopback one.
func exempt(addr string) bool {
	if addr == "" {
		return true
	}
	a, err := netip.ParseAddr(addr)
	return err == nil && a.Unmap().IsLoopback()
}

// admit returns a rate_limited error while addr is over the limit.
func (l *failureLimiter) admit(addr string, now time.Time) error {
	if exempt(addr) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byAddr[addr]
	if e == nil {
		return nil
	}
	f := e.Value.(*addressFailures)
	f.expire(now)
	if len(f.times) == 0 {
		l.forget(e)
	}
	if len(f.times) < FailureLimit {
		return nil
	}
	wait := f.times[0].Add(FailureWindow).Sub(now)
	return errs.Limited(wait, "too many refused credentials or failed sign-ins from %s; try again in %d seconds", addr,
		max(1, int((wait+time.Second-1)/time.Second)))
}

// fail counts a failure of addr at now.
func (l *failureLimiter) fail(addr string, now time.Time) {
	if exempt(addr) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for front := l.order.Front(); front != nil; front = l.order.Front() { // forget the expired
		f := front.Value.(*addressFailures)
		if len(f.times) > 0 && now.Sub(f.times[len(f.times)-1]) < FailureWindow {
			break
		}
		l.forget(front)
	}
	e := l.byAddr[addr]
	if e == nil {
		e = l.order.PushBack(&addressFailures{addr: addr})
		l.byAddr[addr] = e
	} else {
		l.order.MoveToBack(e)
	}
	f := e.Value.(*addressFailures)
	f.expire(now)
	f.times = append(f.times, now)
	if len(f.times) > FailureLimit {
		f.times = f.times[len(f.times)-FailureLimit:]
	}
	if len(f.times) == FailureLimit {
		slog.Warn("rate limit: refused credentials or failed sign-ins from one address", "address", addr,
			"failures", FailureLimit, "within", FailureWindow)
	}
	for len(l.byAddr) > maxTrackedAddresses {
		l.forget(l.order.Front())
	}
}

func (l *failureLimiter) forget(e *list.Element) {
	delete(l.byAddr, e.Value.(*addressFailures).addr)
	l.order.Remove(e)
}

// expire drops the failures that have left the window.
func (f *addressFailures) expire(now time.Time) {
	i := 0
	for i < len(f.times) && now.Sub(f.times[i]) >= FailureWindow {
		i++
	}
	f.times = f.times[i:]
}

// AdmitSignIn refuses a sign-in (/login, /auth/callback) from an address over the
// limit of failures, with a rate_limited error.
func (s *Service) AdmitSignIn(addr string) error { return s.limits.admit(addr, s.clock()) }

// SignInFailed counts a failed sign-in of addr against its limit: a refusal
// (unauthenticated or forbidden), not a failure of the server or the provider.
func (s *Service) SignInFailed(addr string, err error) {
	if c := errs.CodeOf(err); c == errs.Unauthenticated || c == errs.Forbidden {
		s.limits.fail(addr, s.clock())
	}
}
