package app

import (
	goruntime "runtime"
	"slices"

	"github.com/agentdesk/agentdesk/backend/server"
)

// WindowOrigins are the origins the window's pages have, which the event stream must
// accept in the desktop build (and only there): Wails v2 loads the UI from wails://wails/
// on Linux and macOS (WebKit sends Origin: wails://wails) and from http://wails.localhost/
// on Windows (WebView2).
var WindowOrigins = windowOrigins(goruntime.GOOS)

func windowOrigins(goos string) []string {
	if goos == "windows" {
		return []string{"http://wails.localhost"}
	}
	return []string{"wails://wails"}
}

// windowConfig is the server's configuration under the desktop window: the window's
// pages may open the event stream on ws://<cfg.Addr> with their own origin, and webhooks
// may reach private addresses (the window's owner is the operator, and their receivers
// often run beside it).
func windowConfig(cfg server.Config) server.Config {
	cfg.AllowedOrigins = append(slices.Clone(cfg.AllowedOrigins), WindowOrigins...)
	cfg.WebhooksAllowPrivate = true
	return cfg
}
