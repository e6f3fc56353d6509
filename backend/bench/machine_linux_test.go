package main

import (
	"testing"
	"time"
)

// TestSampleMachine reads this machine's /proc: the counters move while this process
// works, and a PostgreSQL backend that starts during a phase counts from zero.
func TestSampleMachine(t *testing.T) {
	before := sampleMachine(nil, true)
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
	}
	time.Sleep(20 * time.Millisecond)
	after := sampleMachine(nil, true)
	if after.busy <= before.busy || after.switches <= before.switches || after.idle < before.idle {
		t.Fatalf("the machine's counters did not move: %+v then %+v", before, after)
	}
	u := machineSample{postgres: map[int]time.Duration{1: time.Second}}.use(
		machineSample{postgres: map[int]time.Duration{1: 2 * time.Second, 2: time.Second}, busy: time.Second, idle: time.Second, switches: 40},
		time.Second, 10)
	if u.postgresUS != 200_000 || u.cpuUS != 100_000 || u.loadgenUS != 100_000 || u.switches != 4 || u.idleShare != 0.5 || !u.postgresSeen {
		t.Fatalf("use = %+v", u)
	}
}
