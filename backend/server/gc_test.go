package server

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 400},           // goal 16 MiB, from the floor
		{1 * mib, 425},     // goal 17 MiB, from the floor (4 MiB * 4.25)
		{8 * mib, 200},     // goal 24 MiB = 8 * 3
		{16 * mib, 100},    // goal 32 MiB: Go's default pace
		{200 * mib, 100},   // a big heap keeps the default
		{3 * mib / 2, 437}, // goal 17.5 MiB
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}

// After a collection the pacer sets GOGC for the live heap it found; this test's heap
// is small, so the pace is slower than Go's default.
func TestPaceGCAfterACollection(t *testing.T) {
	t.Setenv("GOGC", "") // unset for paceGC; the runtime read it at start
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	paceGC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs on its own goroutine
		pct := debug.SetGCPercent(100)
		debug.SetGCPercent(pct)
		if pct > 100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is still %d after collections", pct)
		}
	}
}
