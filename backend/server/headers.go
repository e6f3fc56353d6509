package server

import (
	"net/http"
	"strings"
)

// uiCSP is the Content-Security-Policy of the web UI's pages: exactly what the built UI
// (frontend/dist) needs. Its scripts and styles are files under /assets/ ('self'); Svelte
// writes style attributes (style="width: 40%"), which a hash or nonce cannot cover,
// hence 'unsafe-inline' for styles only; the favicon is a data: URL; fetch and the
// event stream's WebSocket go to the page's own origin ('self' covers ws: and wss:).
// frame-ancestors 'none': no other site may frame the UI (clickjacking).
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

// WithWindowSecurityHeaders gives the desktop window's pages the same headers as the
// server's: the window loads the UI from its own origin (wails://wails), not from the
// server, so its event stream's WebSocket goes to another origin, streamOrigin (the
// server's ws://127.0.0.1:PORT), which connect-src must name as well.
func WithWindowSecurityHeaders(next http.Handler, streamOrigin string) http.Handler {
	policy := strings.Replace(uiCSP, "connect-src 'self'", "connect-src 'self' "+streamOrigin, 1)
	return securityHeaders(next, policy)
}

// playgroundCSP is the policy of the GraphQL page (backend/graphql/playground.html): it
// loads nothing from elsewhere; its one inline <script> and one inline <style> are
// allowed by their SHA-256 (TestPlaygroundCSPHashes recomputes them from the file, so
// an edit of the page that forgets to update them fails the tests), and it posts to
// /graphql.
const playgroundCSP = "default-src 'none'; script-src 'sha256-4w+5nGPWqI9nk20pyr9Tjz0K4zB6H0WLKKbDYj98JNM='; " +
	"style-src 'sha256-eRwxE4XHfpcR5K1FNzGfNOmLqRuWegfXE5YfZk8NPr4='; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// withSecurityHeaders gives every page a browser may show its security headers: the web
// UI (every path outside /api and /healthz, which the UI's fallback serves) and the
// GraphQL page at /graphql get their Content-Security-Policy, Referrer-Policy
// same-origin and X-Content-Type-Options nosniff. The JSON API is left as it is. They
// are set before the handler runs, so a handler may still replace them.
func withSecurityHeaders(next http.Handler) http.Handler { return securityHeaders(next, uiCSP) }

func securityHeaders(next http.Handler, uiPolicy string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		var csp string
		switch {
		case p == "/api" || strings.HasPrefix(p, "/api/") || p == "/healthz":
		case p == "/graphql" || strings.HasPrefix(p, "/graphql/"):
			csp = playgroundCSP
		default:
			csp = uiPolicy
		}
		if csp != "" {
			h := w.Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("Referrer-Policy", "same-origin")
			h.Set("X-Content-Type-Options", "nosniff")
		}
		next.ServeHTTP(w, r)
	})
}
