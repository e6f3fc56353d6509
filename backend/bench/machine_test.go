package main

import (
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	raw := "cpu  138693 5 71250 112663 6716 0 12408 7 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1 2\nctxt 16544595\nbtime 1\n"
	busy, idle, switches := parseProcStat(raw)
	tick := time.Second / clockTicks
	if want := time.Duration(138693+5+71250+0+12408+7) * tick; busy != want {
		t.Errorf("busy = %v, want %v", busy, want)
	}
	if want := time.Duration(112663+6716) * tick; idle != want {
		t.Errorf("idle = %v, want %v", idle, want)
	}
	if switches != 16544595 {
		t.Errorf("switches = %d, want 16544595", switches)
	}
}

func TestParsePidStat(t *testing.T) {
	// A name with spaces and a parenthesis, as PostgreSQL's backends and others may have.
	raw := []byte("4242 (postgres: a (b)) S 1 2 3 4 5 6 7 8 9 10 250 70 0 0 20 0 1 0 9 1 1\n")
	name, cpu, ok := parsePidStat(raw)
	if !ok || name != "postgres: a (b)" || cpu != 320*(time.Second/clockTicks) {
		t.Fatalf("parsePidStat = %q, %v, %v; want \"postgres: a (b)\", 3.2s, true", name, cpu, ok)
	}
	if _, _, ok := parsePidStat([]byte("4242 (cut")); ok {
		t.Fatal("a cut line parsed")
	}
}

// TestMachineUse divides a phase's use by its requests; a PostgreSQL backend that
// started during the phase counts from zero.
func TestMachineUse(t *testing.T) {
	u := machineSample{postgres: map[int]time.Duration{1: time.Second}}.use(
		machineSample{postgres: map[int]time.Duration{1: 2 * time.Second, 2: time.Second}, busy: time.Second, idle: time.Second, switches: 40},
		time.Second, 10)
	if u.postgresUS != 200_000 || u.cpuUS != 100_000 || u.loadgenUS != 100_000 || u.switches != 4 || u.idleShare != 0.5 || !u.postgresSeen {
		t.Fatalf("use = %+v", u)
	}
}
