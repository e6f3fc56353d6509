package service

import (
	"container/list"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// Two limits per client address (the contract's "429 with Retry-After"), each a
// sliding window:
//
//   - failures: a credential Authenticate refuses as unauthenticated (wrong, unknown,
//     revoked or expired token, agent digest or session cookie; a request with no
//     credential at all is not one: every signed-out browser sends those, and they
//     guess nothing), or a sign-in whose provider answer fails verification at
//     /auth/callback (a code the provider refuses, an ID token that does not verify,
//     a nonce that does not match). A callback without the browser's login cookie, or
//     with the provider's ?error=, is not one: a page anywhere can make a browser send
//     those. Past FailureLimit failures within FailureWindow, each further refusal is
//     answered 429 rate_limited, with Retry-After until the oldest failure leaves the
//     window. A valid credential is never refused because its address is limited:
//     one office behind a NAT is one address, and one guesser there must not lock
//     everyone else out;
//   - sign-ins begun: GET /login stores a login under way, so it is limited on its own,
//     to LoginLimit a LoginWindow per address; over it, 429 with Retry-After.
//
// Loopback addresses (agents and scripts on this machine) and requests that came
// through no network are never limited: a token is 256 random bits, so the limit is
// against noise from the network, not a defence of the tokens. Behind a reverse proxy
// on this machine, --trusted-proxies must name it, or every client looks like loopback
// and nobody is limited. At most maxTrackedAddresses addresses are tracked per limit;
// past that, the one counted least recently is forgotten. An address leaves once what
// it counted is older than the window.
const (
	FailureLimit        = 10
	FailureWindow       = time.Minute
	LoginLimit          = 30
	LoginWindow         = time.Minute
	maxTrackedAddresses = 10_000
)

// addressLimiter counts events per address: at most limit within window. Its list
// holds the tracked addresses, least recently counted first, so expiry and eviction
// take from the front.
type addressLimiter struct {
	limit  int
	window time.Duration
	what   string // what it counts, for the 429's message and the log
	mu     sync.Mutex
	byAddr map[string]*list.Element // value: *addressEvents
	order  list.List
}

type addressEvents struct {
	addr  string
	times []time.Time // oldest first, at most limit
}

func newAddressLimiter(limit int, window time.Duration, what string) *addressLimiter {
	return &addressLimiter{limit: limit, window: window, what: what, byAddr: map[string]*list.Element{}}
}

func newFailureLimiter() *addressLimiter {
	return newAddressLimiter(FailureLimit, FailureWindow, "refused credentials or failed sign-ins")
}

func newLoginLimiter() *addressLimiter {
	return newAddressLimiter(LoginLimit, LoginWindow, "sign-ins begun")
}

// exempt: no address (no network) or a loopback one.
func exempt(addr string) bool {
	if addr == "" {
		return true
	}
	a, err := netip.ParseAddr(addr)
	return err == nil && a.Unmap().IsLoopback()
}

// admit returns a rate_limited error while addr has counted limit events within the
// window.
func (l *addressLimiter) admit(addr string, now time.Time) error {
	if exempt(addr) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byAddr[addr]
	if e == nil {
		return nil
	}
	f := e.Value.(*addressEvents)
	f.expire(now, l.window)
	if len(f.times) == 0 {
		l.forget(e)
	}
	if len(f.times) < l.limit {
		return nil
	}
	wait := f.times[0].Add(l.window).Sub(now)
	return errs.Limited(wait, "too many %s from %s; try again in %d seconds", l.what, addr,
		max(1, int((wait+time.Second-1)/time.Second)))
}

// count counts an event of addr at now.
func (l *addressLimiter) count(addr string, now time.Time) {
	if exempt(addr) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for front := l.order.Front(); front != nil; front = l.order.Front() { // forget the expired
		f := front.Value.(*addressEvents)
		if len(f.times) > 0 && now.Sub(f.times[len(f.times)-1]) < l.window {
			break
		}
		l.forget(front)
	}
	e := l.byAddr[addr]
	if e == nil {
		e = l.order.PushBack(&addressEvents{addr: addr})
		l.byAddr[addr] = e
	} else {
		l.order.MoveToBack(e)
	}
	f := e.Value.(*addressEvents)
	f.expire(now, l.window)
	reached := len(f.times) == l.limit-1 // logged once, not at each refusal past the limit
	f.times = append(f.times, now)
	if len(f.times) > l.limit {
		f.times = f.times[len(f.times)-l.limit:]
	}
	if reached {
		slog.Warn("rate limit: "+l.what+" from one address", "address", addr, "count", l.limit, "within", l.window)
	}
	for len(l.byAddr) > maxTrackedAddresses {
		l.forget(l.order.Front())
	}
}

// refuse counts a refusal of addr and returns err, or a rate_limited error when addr
// was over the limit already: the refusals past the limit are answered 429.
func (l *addressLimiter) refuse(addr string, now time.Time, err error) error {
	limited := l.admit(addr, now)
	l.count(addr, now)
	if limited != nil {
		return l.admit(addr, now) // its Retry-After counts this refusal too
	}
	return err
}

func (l *addressLimiter) forget(e *list.Element) {
	delete(l.byAddr, e.Value.(*addressEvents).addr)
	l.order.Remove(e)
}

// expire drops the events that have left the window.
func (f *addressEvents) expire(now time.Time, window time.Duration) {
	i := 0
	for i < len(f.times) && now.Sub(f.times[i]) >= window {
		i++
	}
	f.times = f.times[i:]
}

// SignInRefused counts a sign-in whose provider answer failed verification against
// addr's limit of failures, and returns err, or a rate_limited error past the limit.
func (s *Service) SignInRefused(addr string, err error) error {
	return s.limits.refuse(addr, s.clock(), err)
}
