// Package app is the desktop shell: the window's options and lifecycle. The window shows
// the same web UI as --serve, and the same process serves the API on 127.0.0.1 so that
// agents can connect while it is open. Built only with the desktop tags; other builds
// say how to use --serve instead.
package app

// Window options of the desktop shell.
const (
	Title     = "agentdesk"
	Width     = 1280
	Height    = 820
	MinWidth  = 720
	MinHeight = 480
)

// NoDesktopHint is what a build without the desktop shell says when started without flags.
const NoDesktopHint = "agentdesk: this build has no desktop window; run the server with: agentdesk --serve (then open http://127.0.0.1:8080)"
