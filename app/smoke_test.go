//go:build desktopsmoke

// The desktop smoke test: it builds the desktop binary, opens its window under Xvfb and
// checks what Dana would see and what her agents rely on. `make test` runs it (tag
// desktopsmoke); it needs the packages .ci/run installs (libgtk-3-dev
// libwebkit2gtk-4.1-dev xvfb imagemagick xauth dbus-daemon) and the built UI.
package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Where the screenshot is kept for people to look at (bin/ is ignored by git).
const (
	shotPath     = "bin/desktop-smoke.png"
	portShotPath = "bin/desktop-smoke-port-taken.png"
	// The window started on a data directory that agentdesk --serve serves.
	servedShotPath = "bin/desktop-smoke-served-elsewhere.png"
)

func TestDesktopSmoke(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"Xvfb", "import", "dbus-daemon", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: apt-get install -y --no-install-recommends libgtk-3-dev libwebkit2gtk-4.1-dev xvfb imagemagick xauth dbus-daemon pkg-config (bash .ci/run does)", tool)
		}
	}
	tmp := t.TempDir()
	// make test-package runs this on the installed package's binary instead of a build.
	bin := os.Getenv("AGENTDESK_DESKTOP_BIN")
	if bin == "" {
		ensureUI(t, root)
		bin = buildDesktop(t, root, tmp)
	} else {
		t.Logf("testing the installed %s", bin)
	}
	env := desktopSession(t, tmp)

	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	data := filepath.Join(tmp, "data")
	// At DEBUG the log has a line per request: the event stream's is checked at the end.
	app := start(t, append(slices.Clone(env), "AGENTDESK_LOG_LEVEL=debug"), bin, "--data", data, "--addr", "127.0.0.1:"+strconv.Itoa(port))

	// Agents reach the API on 127.0.0.1 while the window is open.
	waitFor(t, app, 60*time.Second, "GET /healthz answers 200", func() bool {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	// The window's UI signed in with the desktop session and loaded data: its first
	// request with the session token answered 2xx (app/binding.go logs it once).
	waitFor(t, app, 90*time.Second, "the window's first signed-in request", func() bool {
		return strings.Contains(app.log(), "window signed in")
	})

	// The window shows the board: the screen is not one flat colour.
	screen := image.Rect(0, 0, 1280, 800)
	var before image.Image
	waitFor(t, app, 30*time.Second, "a rendered (not blank) window in the screenshot", func() bool {
		before = screenshot(t, env, filepath.Join(root, shotPath))
		return notBlank(before, screen)
	})

	// An integration creates a task over 127.0.0.1 while the window is open; the window
	// learns of it from the event stream and draws it: the screen changes.
	project := strings.TrimSpace(run(t, env, bin, "project", "list", "--data", data))
	project = regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(project)[1]
	token := strings.TrimSpace(run(t, env, bin, "token", "create", "--data", data, "--project", project, "--name", "smoke", "--scopes", "task:read,task:write"))
	req, _ := http.NewRequest("POST", base+"/api/tasks", strings.NewReader(`{"summary":"Smoke test task","steps":[{"title":"Look at the board"}]}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/tasks while the window is open: %d %s", res.StatusCode, body)
	}
	waitFor(t, app, 30*time.Second, "the new task drawn in the window (the screenshot changes)", func() bool {
		after := screenshot(t, env, filepath.Join(root, shotPath))
		return notBlank(after, screen) && changed(before, after, screen) > 500
	})
	t.Logf("screenshot: %s", filepath.Join(root, shotPath))

	// A second launch brings the first window to the front and exits, starting nothing.
	second := run2(t, env, 30*time.Second, bin, "--data", data, "--addr", "127.0.0.1:"+strconv.Itoa(port))
	if second.code != 0 || !strings.Contains(second.out, "already open") || strings.Contains(second.out, "listening") {
		t.Fatalf("second launch: exit %d, output:\n%s", second.code, second.out)
	}
	waitFor(t, app, 10*time.Second, "the first window hears of the second launch", func() bool {
		return strings.Contains(app.log(), "second launch: bringing the window to the front")
	})
	// Without a session bus it cannot raise the window, but still starts nothing: the
	// data directory's lock, not D-Bus, is what keeps a second server off.
	noBus := append(slices.Clone(env), "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(tmp, "no-bus"))
	third := run2(t, noBus, 30*time.Second, bin, "--data", data, "--addr", "127.0.0.1:"+strconv.Itoa(port))
	if third.code != 0 || !strings.Contains(third.out, "already open") || !strings.Contains(third.out, "could not bring it to the front") || strings.Contains(third.out, "listening") {
		t.Fatalf("second launch without D-Bus: exit %d, output:\n%s", third.code, third.out)
	}
	if res, err := http.Get(base + "/healthz"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the first server must keep serving after a second launch: %v", err)
	}

	// Another program holds the port: one clear line on stderr, and the same in a small
	// window (launched from a desktop nobody reads stderr); once that closes, exit 1.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	busy := start(t, env, bin, "--data", filepath.Join(tmp, "data2"), "--addr", held.Addr().String())
	waitFor(t, busy, 30*time.Second, "the port-taken line", func() bool { return strings.Contains(busy.log(), "already in use") })
	waitFor(t, busy, 30*time.Second, "the port-taken window, drawn", func() bool {
		img, ok := windowShot(env, "agentdesk cannot start", filepath.Join(root, portShotPath))
		return ok && notBlank(img, img.Bounds())
	})
	if err := busy.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-busy.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the port-taken window did not close on SIGTERM; output:\n%s", busy.log())
	}
	var said []string
	for _, line := range strings.Split(busy.log(), "\n") {
		if strings.HasPrefix(line, "agentdesk:") {
			said = append(said, line)
		}
	}
	if busy.code != 1 || len(said) != 1 || !strings.Contains(said[0], "already in use") || !strings.Contains(said[0], "--addr") ||
		strings.Contains(busy.log(), "goroutine ") || strings.Contains(busy.log(), "listening") {
		t.Fatalf("port taken: exit %d, want 1 and one line naming the port and --addr; output:\n%s", busy.code, busy.log())
	}

	// Another agentdesk (--serve) serves the data directory: the window says so, with
	// that server's URL and a button to open it in the browser, instead of exiting with
	// no window; once that closes, exit 1, and the server goes on.
	servedData := filepath.Join(tmp, "served")
	serving := start(t, env, bin, "--serve", "--addr", "127.0.0.1:0", "--data", servedData)
	var servedURL string
	waitFor(t, serving, 60*time.Second, "the --serve server's URL in its data directory", func() bool {
		servedURL = server.RunningURL(servedData)
		return servedURL != ""
	})
	beside := start(t, env, bin, "--data", servedData)
	waitFor(t, beside, 30*time.Second, "the already-served line", func() bool { return strings.Contains(beside.log(), "already serving") })
	waitFor(t, beside, 30*time.Second, "the already-running window, drawn", func() bool {
		img, ok := windowShot(env, "agentdesk is already running", filepath.Join(root, servedShotPath))
		return ok && notBlank(img, img.Bounds())
	})
	t.Logf("screenshot: %s", filepath.Join(root, servedShotPath))
	if err := beside.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-beside.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the already-running window did not close on SIGTERM; output:\n%s", beside.log())
	}
	if beside.code != 1 || !strings.Contains(beside.log(), servedURL) || strings.Contains(beside.log(), "listening") {
		t.Fatalf("beside a running server: exit %d, want 1 and its URL %s; output:\n%s", beside.code, servedURL, beside.log())
	}
	if res, err := http.Get(servedURL + "/healthz"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the --serve server after the window's attempt: %v", err)
	}

	// Double-clicked, with the default port taken, the window opens on a free port (it
	// has no way to be given --addr), and agents find it in the data directory.
	if taken, err := net.Listen("tcp", server.DefaultAddr); err == nil { // else it is taken already
		defer taken.Close()
	}
	freeData := filepath.Join(tmp, "data3")
	free := start(t, env, bin, "--data", freeData)
	listening := regexp.MustCompile(`msg="agentdesk is listening" url=(http://127\.0\.0\.1:\d+)`)
	var freeURL string
	waitFor(t, free, 60*time.Second, "the window on a free port", func() bool {
		m := listening.FindStringSubmatch(free.log())
		if m == nil {
			return false
		}
		freeURL = m[1]
		return true
	})
	if freeURL == "http://"+server.DefaultAddr || !strings.Contains(free.log(), "listening on a free port instead") {
		t.Fatalf("the window listens on %s; log:\n%s", freeURL, free.log())
	}
	if res, err := http.Get(freeURL + "/healthz"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/healthz: %v", freeURL, err)
	}
	waitFor(t, free, 90*time.Second, "the window on a free port signs in", func() bool {
		return strings.Contains(free.log(), "window signed in")
	})
	if noted := server.RunningURL(freeData); noted != freeURL {
		t.Fatalf("the data directory names %q as the running server, want %s", noted, freeURL)
	}
	if err := free.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-free.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the window on a free port did not stop within 30 s of SIGTERM; log:\n%s", free.log())
	}

	// SIGTERM closes the window and stops everything cleanly: exit 0.
	if err := app.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-app.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("agentdesk did not stop within 30 s of SIGTERM; log:\n%s", app.log())
	}
	if app.code != 0 || !strings.Contains(app.log(), "stopped cleanly") {
		t.Fatalf("after SIGTERM: exit %d; log:\n%s", app.code, app.log())
	}

	// The window opened the event stream from its own origin (wails://wails): the
	// upgraded connection is logged when it ends (gin reports a hijacked connection as
	// 200); a refused origin would be a 403.
	log := app.log()
	if !regexp.MustCompile(`path=/api/events status=200 .*remote=127\.0\.0\.1`).MatchString(log) || strings.Contains(log, "path=/api/events status=403") {
		t.Fatalf("the window's event stream was not accepted; log:\n%s", log)
	}
	if strings.Contains(log, "window request refused") {
		t.Fatalf("the window had requests refused; log:\n%s", log)
	}

	checkDatabase(t, filepath.Join(data, "agentdesk.db"))
}

// ensureUI builds the web UI into frontend/dist when it is not built yet (make test
// builds it first; this is for go test run alone).
func ensureUI(t *testing.T, root string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, "frontend", "dist", "index.html")); err == nil {
		return
	}
	t.Log("frontend/dist has no index.html: building the UI (npm ci && npm run build)")
	for _, args := range [][]string{{"npm", "ci"}, {"npm", "run", "build"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = filepath.Join(root, "frontend")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func buildDesktop(t *testing.T, root, tmp string) string {
	t.Helper()
	bin := filepath.Join(tmp, "agentdesk-desktop")
	began := time.Now()
	cmd := exec.Command("go", "build", "-tags", "desktop,production,webkit2_41", "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("desktop build: %v\n%s", err, out)
	}
	t.Logf("desktop build: %s", time.Since(began).Round(time.Second))
	return bin
}

// desktopSession starts what a desktop session has: an X server (Xvfb) and a D-Bus
// session bus (which the single-instance lock uses). It returns the environment for
// the processes of the test.
func desktopSession(t *testing.T, tmp string) []string {
	t.Helper()
	display := -1
	for n := 90; n < 190; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); errors.Is(err, os.ErrNotExist) {
			if _, err := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", n)); errors.Is(err, os.ErrNotExist) {
				display = n
				break
			}
		}
	}
	if display < 0 {
		t.Fatal("no free X display number between :90 and :189")
	}
	xvfb := exec.Command("Xvfb", fmt.Sprintf(":%d", display), "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	background(t, xvfb)
	waitFor(t, nil, 20*time.Second, "Xvfb's socket", func() bool {
		_, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", display))
		return err == nil
	})

	busSocket := filepath.Join(tmp, "bus")
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--address=unix:path="+busSocket)
	background(t, bus)
	waitFor(t, nil, 20*time.Second, "the D-Bus session bus", func() bool {
		_, err := os.Stat(busSocket)
		return err == nil
	})

	runtimeDir, home := filepath.Join(tmp, "xdg-runtime"), filepath.Join(tmp, "home")
	for _, d := range []string{runtimeDir, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "HOME", "AGENTDESK_DATA", "AGENTDESK_ADDR", "XDG_SESSION_TYPE", "GDK_BACKEND":
			continue
		}
		env = append(env, kv)
	}
	return append(env, fmt.Sprintf("DISPLAY=:%d", display), "DBUS_SESSION_BUS_ADDRESS=unix:path="+busSocket,
		"XDG_RUNTIME_DIR="+runtimeDir, "HOME="+home)
}

// background starts a helper process and stops it (by its pid) when the test ends.
func background(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr = orphanKill()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

// orphanKill has the kernel kill a child if the test process dies first (a test timeout
// ends the process without running the cleanups).
func orphanKill() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
	code int
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// start runs the window in the background; the test ends it if it is still running.
func start(t *testing.T, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.SysProcAttr = orphanKill()
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.exited() {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

type result struct {
	code int
	out  string
}

// run2 runs a command to its end (at most timeout) and returns its exit status and output.
func run2(t *testing.T, env []string, timeout time.Duration, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not end within %s; output:\n%s", bin, args, timeout, out)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, string(out)}
}

// run runs a CLI command that must succeed and returns its standard output.
func run(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agentdesk %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// waitFor polls cond until it holds; it fails the test at the deadline or as soon as
// the window's process (if any) has exited.
func waitFor(t *testing.T, p *process, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return
		}
		if p != nil && p.exited() {
			t.Fatalf("waiting for %s: agentdesk exited with status %d; log:\n%s", what, p.code, p.log())
		}
		if time.Now().After(deadline) {
			log := ""
			if p != nil {
				log = p.log()
			}
			t.Fatalf("waiting for %s: not within %s; log:\n%s", what, within, log)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// screenshot takes the whole X screen with ImageMagick's import and keeps it at path.
func screenshot(t *testing.T, env []string, path string) image.Image {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("import", "-window", "root", path)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// windowShot takes one window, found by its title, with ImageMagick's import; false
// while there is no such window (import then waits for a click: it is stopped).
func windowShot(env []string, title, path string) (image.Image, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "import", "-window", title, path)
	cmd.Env = env
	if err := cmd.Run(); err != nil {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	img, err := png.Decode(f)
	return img, err == nil
}

// notBlank tells whether a region holds a rendered page rather than an empty window:
// no single colour covers more than 97% of it, and it has many colours (text is drawn
// anti-aliased).
func notBlank(img image.Image, r image.Rectangle) bool {
	r = r.Intersect(img.Bounds())
	counts := map[uint32]int{}
	total := 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			counts[(cr>>8)<<16|(cg>>8)<<8|cb>>8]++
			total++
		}
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	return total > 0 && len(counts) >= 32 && float64(most)/float64(total) < 0.97
}

// changed counts the pixels of r that differ between a and b.
func changed(a, b image.Image, r image.Rectangle) int {
	r = r.Intersect(a.Bounds()).Intersect(b.Bounds())
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, _ := a.At(x, y).RGBA()
			br, bg, bb, _ := b.At(x, y).RGBA()
			if ar != br || ag != bg || ab != bb {
				n++
			}
		}
	}
	return n
}

// checkDatabase opens the database the window left and checks that it is consistent
// and that the window's session is over: its token was used, then revoked.
func checkDatabase(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var integrity string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check: %q %v", integrity, err)
	}
	db.Close()

	ctx := context.Background()
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	projects, err := st.Read().Projects(ctx)
	if err != nil || len(projects) == 0 || projects[0].Name != service.DefaultProjectName {
		t.Fatalf("projects: %v %v", projects, err)
	}
	toks, err := st.Read().Tokens(ctx, projects[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	sessions := 0
	for _, tk := range toks {
		if tk.Name != service.DesktopSessionTokenName {
			continue
		}
		sessions++
		if tk.RevokedAt == nil || tk.LastUsedAt == nil {
			t.Errorf("the window's session token must have been used and then revoked: %+v", tk)
		}
	}
	if sessions != 1 {
		t.Fatalf("want exactly one desktop session token, got %d", sessions)
	}
}

// TestInstalledPackage checks what the .deb put in place besides the binary (make
// test-package installs it, then runs this beside TestDesktopSmoke): the desktop entry
// that starts /usr/bin/agentdesk, with its icon in the hicolor theme, the systemd unit
// for --serve, and the copyright.
func TestInstalledPackage(t *testing.T) {
	if os.Getenv("AGENTDESK_DESKTOP_BIN") == "" {
		t.Skip("make test-package runs this on the installed package")
	}
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", "agentdesk").Output()
	if err != nil || string(out) != "install ok installed" {
		t.Fatalf("dpkg-query: %q %v", out, err)
	}
	entry, err := os.ReadFile("/usr/share/applications/agentdesk.desktop")
	if err != nil || !regexp.MustCompile(`(?m)^Exec=agentdesk$`).Match(entry) || !regexp.MustCompile(`(?m)^Icon=agentdesk$`).Match(entry) {
		t.Fatalf("desktop entry: %v\n%s", err, entry)
	}
	if path, err := exec.LookPath("agentdesk"); err != nil || path != "/usr/bin/agentdesk" {
		t.Fatalf("the entry's Exec=agentdesk finds %q (%v), want /usr/bin/agentdesk", path, err)
	}
	if f, err := os.Open("/usr/share/icons/hicolor/256x256/apps/agentdesk.png"); err != nil {
		t.Fatal(err)
	} else {
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() != 256 {
			t.Fatalf("icon: %v %v", img.Bounds(), err)
		}
	}
	unit, err := os.ReadFile("/usr/lib/systemd/system/agentdesk.service")
	if err != nil || !strings.Contains(string(unit), "ExecStart=/usr/bin/agentdesk --serve") {
		t.Fatalf("systemd unit: %v\n%s", err, unit)
	}
	if _, err := os.Stat("/usr/share/doc/agentdesk/copyright"); err != nil {
		t.Fatal(err)
	}
	if v, err := exec.Command("/usr/bin/agentdesk", "version").Output(); err != nil || len(bytes.TrimSpace(v)) == 0 {
		t.Fatalf("agentdesk version: %q %v", v, err)
	}
}
