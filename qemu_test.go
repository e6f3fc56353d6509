package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLinuxArm64UnderQemu: the server cross-compiled for linux/arm64 (as make release
// builds it) runs under qemu-user: --version names the version set with -ldflags, and
// --serve answers /healthz. It skips only where qemu-aarch64 is missing, and CI
// (AGENTDESK_REQUIRE_QEMU=1, .ci/run) installs Debian's qemu-user so that it never skips.
func TestLinuxArm64UnderQemu(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		if os.Getenv("AGENTDESK_REQUIRE_QEMU") != "" {
			t.Fatal("qemu-aarch64 is missing (AGENTDESK_REQUIRE_QEMU is set): apt-get install qemu-user")
		}
		t.Skip("qemu-aarch64 is missing: apt-get install qemu-user")
	}
	bin := filepath.Join(t.TempDir(), "agentdesk")
	const pkg = "github.com/agentdesk/agentdesk/backend/version"
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X "+pkg+".Version=0.3.0-test -X "+pkg+".Commit=abc -X "+pkg+".Date=2026-11-29T00:00:00Z", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build for linux/arm64: %v\n%s", err, out)
	}
	out, err := exec.Command(qemu, bin, "--version").CombinedOutput()
	if want := "agentdesk 0.3.0-test (commit abc, built 2026-11-29T00:00:00Z)\n"; err != nil || string(out) != want {
		t.Fatalf("qemu-aarch64 agentdesk --version: %q %v, want %q", out, err, want)
	}

	srv := exec.Command(qemu, bin, "--serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	srv.Env = append(os.Environ(), "AGENTDESK_DB=")
	pipe, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if m := regexp.MustCompile(`url=(http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(60 * time.Second): // emulated: slower than a native start
		t.Fatal("the arm64 server did not start under qemu in 60 s")
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&body)
	if resp.StatusCode != 200 || !strings.Contains(body.String(), `"ok"`) {
		t.Fatalf("GET /healthz under qemu: %d %s", resp.StatusCode, body.String())
	}
}
