package app

import goruntime "runtime"

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
