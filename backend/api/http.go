package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// The HTTP conventions every route shares (RFC 9110), kept out of the routes themselves:
// HEAD on every GET route, 405 with Allow for a known path and a wrong method, and gzip
// (gzip.go).

// Router is the whole HTTP interface: gin's engine with every route, behind the
// conventions gin does not have (HEAD, gzip).
type Router struct {
	*gin.Engine
	observe RequestObserver // nil: none (router.go)
}

type headKey struct{}

// ServeHTTP answers HEAD as GET: gin has no automatic HEAD, and registering HEAD beside
// every GET would let a route added later forget it. net/http itself drops the body of
// an answer to HEAD and keeps its status and headers. A HEAD never switches protocols,
// so the Upgrade header goes: a WebSocket route answers as to a plain GET.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodHead {
		req = req.Clone(context.WithValue(req.Context(), headKey{}, true))
		req.Method = http.MethodGet
		req.Header.Del("Upgrade")
	}
	if req.Header.Get("Upgrade") != "" { // a WebSocket: its connection is handed over as it is
		r.Engine.ServeHTTP(w, req)
		return
	}
	gw := newGzipWriter(w, req)
	r.Engine.ServeHTTP(gw, req)
	gw.close()
}

// requestMethod is the method the client sent: HEAD reaches the handlers as GET.
func requestMethod(r *http.Request) string {
	if r.Context().Value(headKey{}) != nil {
		return http.MethodHead
	}
	return r.Method
}

// methodNotAllowed answers a known path with a method it lacks: 405 in the error
// envelope, with the Allow header gin has set plus HEAD wherever GET is. Gin's list is
// checked against the routes: its lookup in one method's tree can reuse what the lookup
// in another left behind, and name a method that has no such route.
func methodNotAllowed(routes func() gin.RoutesInfo) gin.HandlerFunc {
	return func(c *gin.Context) {
		known := routes()
		allowed := slices.DeleteFunc(strings.Split(c.Writer.Header().Get("Allow"), ", "), func(m string) bool {
			return !slices.ContainsFunc(known, func(r gin.RouteInfo) bool { return r.Method == m && routeMatches(r.Path, c.Request.URL.Path) })
		})
		if i := slices.Index(allowed, http.MethodGet); i >= 0 {
			allowed = slices.Insert(allowed, i+1, http.MethodHead)
		}
		allow := strings.Join(allowed, ", ")
		c.Header("Allow", allow)
		fail(c, errs.NotAllowed("%s is not allowed on %s; it takes %s", requestMethod(c.Request), c.Request.URL.Path, allow))
	}
}

// routeMatches reports whether a path matches a route template (":name" segments).
func routeMatches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, t := range ts {
		if !(strings.HasPrefix(t, ":") && ps[i] != "" || t == ps[i]) {
			return false
		}
	}
	return true
}
