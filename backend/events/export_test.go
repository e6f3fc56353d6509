package events

import "time"

// SetWriteTimeout shortens how long a write may take before the client is given up.
func SetWriteTimeout(h *Hub, d time.Duration) { h.writeTimeout.Store(int64(d)) }
