//go:build desktop

package app

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/menu/keys"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/frontend"
)

// Run opens the desktop window on the data directory of cfg:
//
//  1. it takes the data directory's window lock; if another window holds it, it asks that
//     window to come to the front and returns 0 without touching the port or the database;
//     if a server (--serve) holds it, it says so in a small window that offers to open
//     that server's UI in the browser, and returns 1;
//  2. it starts the server on cfg.Addr (127.0.0.1, for agents), or says in one line why
//     it cannot (on stderr, and in a small window, since launched from a desktop nobody
//     reads stderr) and returns 1;
//  3. it signs the window in as the local owner (a desktop session token, minted by the
//     service layer, handed to the window's JavaScript only through the Desktop binding);
//  4. it shows the window: the built UI from the embedded assets, everything else (the
//     API, /graphql, /healthz) from the server's handler, in-process;
//  5. when the window closes, or on SIGTERM or SIGINT, it revokes the session, shuts the
//     server down (in-flight requests finish, the database closes) and returns 0.
func Run(cfg server.Config) int {
	release, err := lockInstance(cfg.DataDir)
	if errors.Is(err, errAlreadyOpen) {
		if err := activateRunning(InstanceID(cfg.DataDir)); err != nil {
			fmt.Fprintf(os.Stderr, "agentdesk: a window is already open on %s; could not bring it to the front: %v\n", cfg.DataDir, err)
		} else {
			fmt.Fprintf(os.Stderr, "agentdesk: a window is already open on %s; brought it to the front\n", cfg.DataDir)
		}
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentdesk:", err)
		var locked *server.LockedError
		if errors.As(err, &locked) && hasDisplay() {
			showNotice(servedElsewhere(cfg.DataDir, locked))
		}
		return 1
	}
	defer release()

	if !hasDisplay() {
		fmt.Fprintln(os.Stderr, "agentdesk: no display (neither DISPLAY nor WAYLAND_DISPLAY is set): the window needs a graphical session; without one run the server: agentdesk --serve")
		return 1
	}

	ctx := context.Background()
	srv, err := server.Start(ctx, windowConfig(cfg))
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentdesk:", err)
		showNotice(cannotStart(err))
		return 1
	}
	slog.Info("agentdesk is listening", "url", srv.URL(), "data", cfg.DataDir)
	// CLI commands beside the window (agent env) default to its URL, as beside --serve.
	if err := server.NoteURL(cfg.DataDir, cfg.PublicURL, srv.URL()); err != nil {
		slog.Warn("could not note the server's URL in the data directory", "err", err)
	}
	defer server.ForgetURL(cfg.DataDir)
	owner := auth.Owner("")
	sess, err := srv.Service.StartDesktopSession(ctx, owner)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentdesk: sign the window in:", err)
		stop(srv)
		return 1
	}

	w := &window{ready: make(chan struct{})}
	desk := &Desktop{session: Session{Token: sess.Token, ServerURL: srv.URL()}}
	// Notifications go through the session bus (notify.go); without one the window
	// works, and the UI hears why from Notify.
	if desk.notifier, err = NewNotifier(w.open, func(q Question, option string) { answerFromNotification(srv.Service, q, option) }); err != nil {
		slog.Info("no desktop notifications", "err", err)
	} else {
		defer desk.notifier.Close()
	}
	err = w.run(&options.App{
		Menu:      w.menu(srv, cfg.DataDir),
		Title:     Title,
		Width:     Width,
		Height:    Height,
		MinWidth:  MinWidth,
		MinHeight: MinHeight,
		AssetServer: &assetserver.Options{
			Assets:  frontend.Assets(),
			Handler: windowHandler(srv.Handler(), sess.Token),
			// Wails serves index.html itself: the pages get the server's
			// Content-Security-Policy here.
			Middleware: func(next http.Handler) http.Handler {
				return server.WithWindowSecurityHeaders(next, "ws://"+strings.TrimPrefix(srv.URL(), "http://"))
			},
		},
		Bind: []interface{}{desk},
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               InstanceID(cfg.DataDir),
			OnSecondInstanceLaunch: w.toFront,
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentdesk: the window failed:", err)
	}
	slog.Info("window closed: shutting down")
	if endErr := srv.Service.EndDesktopSession(context.Background(), owner, sess); endErr != nil {
		slog.Error("revoke the desktop session", "err", endErr)
	}
	if !stop(srv) || err != nil {
		return 1
	}
	slog.Info("stopped cleanly")
	return 0
}

// stop shuts the server down, letting in-flight requests finish; false if that failed.
func stop(srv *server.Server) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		slog.Error("shutdown", "err", err)
		return false
	}
	return true
}

// hasDisplay tells whether a window can be shown: on Linux, a graphical session.
func hasDisplay() bool {
	return goruntime.GOOS != "linux" || os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// showNotice shows why the window cannot open in a small window of its own (notice.go),
// and returns when that window closes (or on SIGTERM/SIGINT).
func showNotice(n notice) {
	page := n.page()
	w := &window{ready: make(chan struct{})}
	err := w.run(&options.App{
		Title:         n.Title,
		Width:         640,
		Height:        260,
		DisableResize: true,
		AssetServer: &assetserver.Options{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(rw, page)
		})},
	})
	if err != nil {
		slog.Error("show the notice window", "err", err)
	}
}

// icon is the window's icon: build/appicon.png (what `wails build` packages) at 256 px.
//
//go:embed icon.png
var icon []byte

// window is the running window's Wails context, once it has one.
type window struct {
	once  sync.Once
	ready chan struct{}
	ctx   context.Context
}

// run shows a window with the options every agentdesk window shares, and returns when it
// closes: by the user, or on SIGTERM or SIGINT.
func (w *window) run(app *options.App) error {
	closed := make(chan struct{})
	go w.quitOnSignal(closed)
	defer close(closed)
	app.OnStartup = w.started
	app.Linux = &linux.Options{
		ProgramName: "agentdesk",
		Icon:        icon,
		// Wails' default when Linux options are nil (wails issue 2977): software
		// rendering, which works on every driver and under Xvfb.
		WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
	}
	return wails.Run(app)
}

func (w *window) started(ctx context.Context) {
	w.once.Do(func() {
		w.ctx = ctx
		close(w.ready)
	})
}

// open brings the window to the front on a route of the UI (a click on a notification):
// the UI listens for the agentdesk:open event and goes there.
func (w *window) open(path string) {
	<-w.ready
	runtime.WindowUnminimise(w.ctx)
	runtime.WindowShow(w.ctx)
	runtime.EventsEmit(w.ctx, "agentdesk:open", path)
}

// menu is the window's menu (menu.go says what its items do): the version, the data
// directory (a click opens it and copies its path) and Back up now.
func (w *window) menu(srv *server.Server, dataDir string) *menu.Menu {
	m := menu.NewMenu()
	sub := m.AddSubmenu("agentdesk")
	sub.AddText(versionLabel(), nil, nil).Disable()
	sub.AddText(dataDirLabel(dataDir), nil, func(*menu.CallbackData) {
		if err := runtime.ClipboardSetText(w.ctx, dataDir); err != nil {
			slog.Warn("copy the data directory", "err", err)
		}
		// The file manager, where there is one; the path is on the clipboard anyway.
		if err := exec.Command("xdg-open", dataDir).Start(); err != nil {
			slog.Info("open the data directory", "err", err)
		}
	})
	sub.AddText("Back up now", nil, func(*menu.CallbackData) {
		go w.backUp(srv) // not on the UI thread: a large database takes a while
	})
	sub.AddSeparator()
	sub.AddText("Quit", keys.CmdOrCtrl("q"), func(*menu.CallbackData) { runtime.Quit(w.ctx) })
	return m
}

// backUp runs "Back up now" and says where the backup went, or why it failed.
func (w *window) backUp(srv *server.Server) {
	home, _ := os.UserHomeDir()
	path, err := backUpNow(context.Background(), srv.Service, home, time.Now())
	opts := runtime.MessageDialogOptions{Type: runtime.InfoDialog, Title: "Backup written", Message: "The backup is at " + path +
		"\n\nTo restore it: quit agentdesk, then run agentdesk restore --from " + path}
	if err != nil {
		slog.Error("back up now", "err", err)
		opts = runtime.MessageDialogOptions{Type: runtime.ErrorDialog, Title: "Backup failed", Message: err.Error()}
	} else {
		slog.Info("backup written", "path", path)
	}
	if _, err := runtime.MessageDialog(w.ctx, opts); err != nil {
		slog.Warn("show the backup's outcome", "err", err)
	}
}

// toFront answers a second launch: the open window comes to the front.
func (w *window) toFront(options.SecondInstanceData) {
	<-w.ready
	slog.Info("second launch: bringing the window to the front")
	runtime.WindowUnminimise(w.ctx)
	runtime.WindowShow(w.ctx)
}

// quitOnSignal makes SIGTERM and SIGINT close the window, so that a signal stops agentdesk
// as cleanly as closing the window does. Once the window has started, Wails' own signal
// handler (pkg/application) quits it; a signal that comes before, while the window is
// being made, would otherwise be lost, so this closes the window as soon as it has
// started. It returns when closed is closed.
func (w *window) quitOnSignal(closed <-chan struct{}) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	select {
	case sig := <-sigs:
		slog.Info("signal: closing the window", "signal", sig.String())
	case <-closed:
		return
	}
	select {
	case <-w.ready:
		return // Wails heard the same signal and quits
	default:
	}
	select {
	case <-w.ready:
		runtime.Quit(w.ctx)
	case <-closed:
	}
}
