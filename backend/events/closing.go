package events

// Closing is closed when Close is called: streams served outside this package (GraphQL
// subscriptions) end on it, as Serve's do.
func (h *Hub) Closing() <-chan struct{} { return h.closing }
