package api

import (
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/frontend"
)

// The web UI: index.html for every page the single-page app routes itself (with
// no-cache, so a new build is picked up at once), and Vite's content-hashed files under
// /assets/ cached for a year. A binary built before the UI says how to build it.

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentdesk</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem">
<h1>agentdesk</h1>
<p>The web UI is not built into this binary. Run <code>make ui</code> (or <code>make build</code>, which builds it first), then rebuild and restart agentdesk.</p>
<p>The API answers as usual: <a href="/api/openapi.json">/api/openapi.json</a> describes it; <a href="/graphql">/graphql</a> serves GraphiQL.</p>
</body></html>
`

// graphiqlPage is the UI build's GraphiQL page (frontend/graphiql.html), served at GET
// /graphql; nil when the binary was built without the UI.
func graphiqlPage() []byte {
	page, err := fs.ReadFile(frontend.Assets(), "graphiql.html")
	if err != nil {
		return nil
	}
	return page
}

// serveUI answers the GET and HEAD requests the router has no route for, outside /api,
// /graphql and /healthz. It reports whether it answered.
func serveUI(c *gin.Context) bool {
	r := c.Request
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	if p == "/api" || strings.HasPrefix(p, "/api/") || p == "/graphql" || strings.HasPrefix(p, "/graphql/") || p == "/healthz" {
		return false
	}
	assets := frontend.Assets()
	if strings.HasPrefix(p, "/assets/") {
		name := strings.TrimPrefix(path.Clean(p), "/")
		if !strings.HasPrefix(name, "assets/") || !serveFile(c, assets, name, "public, max-age=31536000, immutable") {
			c.String(http.StatusNotFound, "404 page not found\n")
		}
		return true
	}
	if !frontend.Built() {
		if p == "/" || acceptsHTML(r) {
			c.Header("Cache-Control", "no-cache")
			c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(notBuiltPage))
			return true
		}
		return false
	}
	// Files at the top of dist/ (favicon and the like), then the app's own pages.
	if name := strings.TrimPrefix(path.Clean(p), "/"); name != "" && name != "index.html" && !strings.Contains(name, "/") {
		if serveFile(c, assets, name, "no-cache") {
			return true
		}
	}
	if p == "/" || acceptsHTML(r) {
		return serveFile(c, assets, "index.html", "no-cache")
	}
	return false
}

// serveFile writes one file of fsys with its content type; false when there is none.
func serveFile(c *gin.Context, fsys fs.FS, name, cacheControl string) bool {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return false
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) { // the OS's mime tables may lack these, or disagree
	case ".js", ".mjs":
		ctype = "text/javascript; charset=utf-8"
	case ".css":
		ctype = "text/css; charset=utf-8"
	case ".html":
		ctype = "text/html; charset=utf-8"
	case ".svg":
		ctype = "image/svg+xml"
	case ".woff2":
		ctype = "font/woff2"
	case ".json", ".map":
		ctype = "application/json"
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	c.Header("Cache-Control", cacheControl)
	c.Header("X-Content-Type-Options", "nosniff")
	if compressible(ctype) { // the UI build leaves name.gz beside its larger text files
		data = precompressed(c.Writer, c.Request, data, gzSibling(fsys, name))
	}
	c.Data(http.StatusOK, ctype, data)
	return true
}

// acceptsHTML reports whether the request would take an HTML page (a browser
// navigating, not a script fetching JSON).
func acceptsHTML(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "text/html") || strings.Contains(accept, "*/*") || accept == ""
}
