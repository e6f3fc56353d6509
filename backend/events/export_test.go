package events

import "time"

// SetWriteTimeout shortens how long a write may take before the client is given up.
func SetWriteTimeout(h *Hub, d time.Duration) { h.writeTimeout.Store(int64(d)) }

// HoldReplaySlots takes every replay slot, as replays running would; release gives
// them back.
func HoldReplaySlots(h *Hub) (release func()) {
	for range cap(h.replays) {
		h.replays <- struct{}{}
	}
	return func() {
		for range cap(h.replays) {
			<-h.replays
		}
	}
}

// SetMaxDeliveryWait changes how long AwaitDelivery holds a write's answer at most.
func SetMaxDeliveryWait(h *Hub, d time.Duration) { h.maxDeliveryWait.Store(int64(d)) }
