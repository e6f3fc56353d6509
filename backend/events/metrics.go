package events

// Stats is how many subscribers follow live events (every project) and how many
// ?since= replays hold a slot now (the metrics' gauges).
func (h *Hub) Stats() (subscribers, replays int) {
	h.mu.Lock()
	for _, f := range h.projects {
		subscribers += len(f.subs)
	}
	h.mu.Unlock()
	return subscribers, len(h.replays)
}
