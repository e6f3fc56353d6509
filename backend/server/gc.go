package server

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The garbage collector's pace.
//
// Go's default (GOGC=100) starts a collection when the heap has grown to twice what the
// last one found live, or to 4 MiB, whichever is more. The server's live heap under
// writes is small (about 1 MiB) while each request allocates some, so the default
// collects dozens of times a second. paceGC lets the heap grow by at least gcHeadroom
// between collections: after each one, it sets GOGC so that the next comes when the
// heap reaches live + max(live, gcHeadroom). A large live heap gets Go's default pace,
// so the peak memory under a read load does not grow. Setting GOGC in the environment
// turns this off (docs/operations.md); why it is kept, with the A/B figures:
// docs/performance.md.
const gcHeadroom = 16 << 20

// minHeapGoal is the runtime's floor for the heap goal at GOGC=100; it scales with GOGC.
const minHeapGoal = 4 << 20

var paceOnce sync.Once

func paceGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	paceOnce.Do(func() { armGCPacer([]metrics.Sample{{Name: "/gc/heap/live:bytes"}}) })
}

// gcSentinel is garbage as soon as it is made: its cleanup runs after the next
// collection, sets the pace, and makes the next sentinel. (It holds a pointer so that
// it is not a tiny allocation, which may never be collected on its own.)
type gcSentinel struct{ _ *int }

func armGCPacer(sample []metrics.Sample) {
	runtime.AddCleanup(new(gcSentinel), func(sample []metrics.Sample) {
		metrics.Read(sample)
		debug.SetGCPercent(gcPercentFor(sample[0].Value.Uint64()))
		armGCPacer(sample)
	}, sample)
}

// gcPercentFor is the GOGC that puts the next collection at live + max(live,
// gcHeadroom). The runtime's goal is max(live*(1+GOGC/100), minHeapGoal*GOGC/100),
// so for a small live heap it is the floor that must reach the goal.
func gcPercentFor(live uint64) int {
	goal := live + max(live, gcHeadroom)
	if live == 0 {
		return int(goal * 100 / minHeapGoal)
	}
	return int(max(100, min((goal-live)*100/live, goal*100/minHeapGoal)))
}
