package jobstest

import (
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/jobs"
)

// ManualClock is a clock that moves only when told to, for tests: Advance and Set fire
// the timers whose time has come.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  map[*manualTimer]struct{}
	changed chan struct{} // closed and replaced whenever the set of timers changes
}

// NewManualClock starts a manual clock at now.
func NewManualClock(now time.Time) *ManualClock {
	return &ManualClock{now: now, timers: map[*manualTimer]struct{}{}, changed: make(chan struct{})}
}

type manualTimer struct {
	c     *ManualClock
	at    time.Time
	ch    chan time.Time
	fired bool
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, pending := t.c.timers[t]
	delete(t.c.timers, t)
	t.c.notify()
	return pending
}

// notify wakes the waiters of WaitForTimer; the caller holds mu.
func (c *ManualClock) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Now is the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer makes a timer that fires once the clock reaches now+d (at once if d <= 0).
func (c *ManualClock) NewTimer(d time.Duration) jobs.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.ch <- c.now
		return t
	}
	c.timers[t] = struct{}{}
	c.notify()
	return t
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t (never backwards) and fires the timers due by then.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	for tm := range c.timers {
		if !tm.at.After(c.now) {
			delete(c.timers, tm)
			tm.fired = true
			tm.ch <- c.now
		}
	}
	c.notify()
}

// Jump moves the wall clock by d, back (d < 0) or forward, as when the system clock
// is set: timers keep the time they have left, as real ones do (Go's timers run on the
// monotonic clock), so a pending timer fires d later or earlier by the wall clock.
func (c *ManualClock) Jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for tm := range c.timers {
		tm.at = tm.at.Add(d)
	}
	c.notify()
}

// WaitForTimer blocks until a pending timer is set for exactly at, or timeout passes;
// it reports whether one was. Tests use it to know the scheduler is waiting for a run.
func (c *ManualClock) WaitForTimer(at time.Time, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for tm := range c.timers {
			if tm.at.Equal(at) {
				c.mu.Unlock()
				return true
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}
