package app

import (
	"fmt"
	"html"
	"path/filepath"

	"github.com/agentdesk/agentdesk/backend/server"
)

// notice is what a small window of its own says when the desktop window cannot open:
// launched from a desktop, nobody reads stderr.
type notice struct {
	Title   string
	Message string
	OpenURL string // when set, an "Open in browser" button opens it
}

// cannotStart is the notice of a failure to start (the port taken, the database).
func cannotStart(cause error) notice {
	return notice{Title: "agentdesk cannot start", Message: cause.Error()}
}

// servedElsewhere is the notice of a data directory that another agentdesk (--serve)
// already serves: where it answers, so that the person opens its UI in a browser
// instead of starting a second server on the same database.
func servedElsewhere(dataDir string, locked *server.LockedError) notice {
	url := server.RunningURL(dataDir) // what agents use: the public URL, or loopback
	if url == "" {
		url = locked.Addr // the lock's note, from before server.url existed
	}
	who := "Another agentdesk"
	if locked.PID > 0 {
		who += fmt.Sprintf(" (pid %d)", locked.PID)
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return notice{
		Title: "agentdesk is already running",
		Message: fmt.Sprintf("%s already serves this data directory (%s) at %s. Open it there in your browser, "+
			"or stop that one and start agentdesk again to have its window.", who, dataDir, url),
		OpenURL: url,
	}
}

// page is the notice's window content. Wails injects its runtime into it (the buttons
// call window.runtime).
func (n notice) page() string {
	open := ""
	if n.OpenURL != "" {
		open = fmt.Sprintf(`<button id="open" data-url="%s" onclick="window.runtime.BrowserOpenURL(this.dataset.url)" style="font: inherit; padding: 6px 18px; margin-right: 8px">Open in browser</button>`,
			html.EscapeString(n.OpenURL))
	}
	return fmt.Sprintf(noticePage, html.EscapeString(n.Title), html.EscapeString(n.Title), html.EscapeString(n.Message), open)
}

const noticePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title></head>
<body style="font: 15px/1.5 system-ui, sans-serif; margin: 0; padding: 24px 28px; color: #1f2937; background: #f9fafb">
<h1 style="font-size: 18px; margin: 0 0 12px">%s</h1>
<p id="cause" style="margin: 0 0 20px; overflow-wrap: anywhere">%s</p>
%s<button onclick="window.runtime.Quit()" style="font: inherit; padding: 6px 18px">Close</button>
</body></html>
`
