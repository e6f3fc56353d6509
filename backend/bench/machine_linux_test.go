package main

import (
	"testing"
	"time"
)

// TestSampleMachine reads this machine's /proc: the counters move while this process
// works.
func TestSampleMachine(t *testing.T) {
	before := sampleMachine(nil, true)
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
	}
	time.Sleep(20 * time.Millisecond)
	after := sampleMachine(nil, true)
	if after.busy <= before.busy || after.switches <= before.switches || after.idle < before.idle {
		t.Fatalf("the machine's counters did not move: %+v then %+v", before, after)
	}
}
