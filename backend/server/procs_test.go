package server

import (
	"runtime"
	"testing"
)

func TestSpareProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)

	t.Setenv("GOMAXPROCS", "1")
	spareProc()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("with GOMAXPROCS set in the environment: %d Ps, want %d (left alone)", got, before)
	}

	t.Setenv("GOMAXPROCS", "")
	spareProc()
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("%d Ps, want %d: one more than the %d the runtime chose", got, before+1, before)
	}
}
