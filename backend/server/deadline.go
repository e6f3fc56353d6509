package server

import (
	"net/http"
	"time"
)

// DefaultBodyReadTimeout is how long a request body may take to arrive, besides the
// time its size allows (bodyAllowance).
const DefaultBodyReadTimeout = time.Minute

// bodyRate is the slowest upload that is still waited for: a body declaring n bytes gets
// n/bodyRate seconds more, so that a 25 MiB document on a slow link still arrives.
const bodyRate = 64 << 10 // bytes a second

// bodyAllowance is the extra time a body declaring n bytes gets (capped: no body
// accepted is bigger than the document upload limit of some 26 MiB).
func bodyAllowance(n int64) time.Duration {
	n = min(max(n, 0), 64<<20)
	return time.Duration(n) * time.Second / bodyRate
}

// withBodyDeadline bounds how long a request's body may take to arrive, so that a client
// trickling a byte every few seconds cannot hold a connection (and a handler) forever.
// http.Server's ReadTimeout would do it for every request alike; this deadline is set
// only on requests that have a body, and net/http clears it once the body has been read
// (its background read for the next request starts then), so handlers that run long
// afterwards, downloads and WebSockets (bodyless GETs, and hijacked) are unaffected.
// Where the connection allows no deadline (the desktop window's in-process requests) it
// does nothing.
func withBodyDeadline(timeout time.Duration, next http.Handler) http.Handler {
	if timeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			// A request without a body has no deadline set here: its connection is
			// already in net/http's background read, which a deadline would cut and so
			// cancel the request's context.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout + bodyAllowance(r.ContentLength)))
		}
		next.ServeHTTP(w, r)
	})
}
