// Package frontend holds the web UI (Svelte + TypeScript + Vite, sources in src/) and
// embeds its build output, dist/, into the binary. The server serves it at / and the
// desktop window loads it. Build it with `make ui` (npm ci && npm run build); a binary
// built before that serves a page saying so.
package frontend

import (
	"embed"
	"io/fs"
)

// dist holds the build output; dist/.keep is committed so that the binary compiles
// before the UI is built.
//
//go:embed all:dist
var dist embed.FS

// Assets is the built UI, rooted at dist/ (index.html, assets/...).
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path: cannot happen
	}
	return sub
}

// Built reports whether the UI was built into this binary.
func Built() bool {
	_, err := fs.Stat(Assets(), "index.html")
	return err == nil
}
