//go:build unix

package app

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

func TestInstanceLockIsHeldOncePerDataDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	release, err := lockInstance(dir)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file: a second open in this process stands for a second launch.
	if _, err := lockInstance(dir); !errors.Is(err, errAlreadyOpen) {
		t.Fatalf("second lock on the same directory: %v, want errAlreadyOpen", err)
	}
	// Another process sees it held too (flock(1), from util-linux, exits 1 when it cannot lock).
	err = exec.Command("flock", "-n", filepath.Join(dir, LockFile), "true").Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("flock -n from another process: %v, want exit status 1 (lock held)", err)
	}
	other, err := lockInstance(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatalf("another data directory must not be locked: %v", err)
	}
	other()
	release()
	again, err := lockInstance(dir)
	if err != nil {
		t.Fatalf("after release the lock must be free: %v", err)
	}
	again()
}

func TestInstanceIDIsAValidDBusNamePerDirectory(t *testing.T) {
	a, b := InstanceID("/home/dana/.local/share/agentdesk"), InstanceID("/tmp/other")
	if a == b || a != InstanceID("/home/dana/.local/share/agentdesk/") {
		t.Fatalf("ids: %q %q", a, b)
	}
	// Wails turns the id into a D-Bus name element by replacing '.' and '-' with '_'.
	if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`).MatchString(a) {
		t.Fatalf("id %q would not make a valid D-Bus name", a)
	}
}
