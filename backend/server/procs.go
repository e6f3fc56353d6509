package server

import (
	"os"
	"runtime"
)

// One P more than the CPUs.
//
// Each write waits on two goroutines that block in file system calls, which the Go
// runtime cannot poll as it polls sockets: the syncer in fdatasync of the WAL (a few
// tenths of a millisecond) and the writer in the pwrites of each commit
// (backend/store's durable.go and write.go). While a goroutine is in such a call its P
// is lost to the others until the runtime's monitor hands it off, and when the call
// returns the goroutine must win a P back; with every P busy running request handlers, it waits in the run queue, and
// so does every request it was about to answer. A build that timed each stage of a
// write measured it under `bench -writes-only` (16 clients, 2 cores): from the fsync's
// end to the handler running again took 316-339 µs with GOMAXPROCS=2, and 239-257 µs
// with 3; the whole write 1,328-1,530 µs against 1,286-1,399. With one P more than the
// CPUs the kernel shares the cores among the threads and runs the one whose I/O has
// completed at once. 8 interleaved pairs of writes-only runs, medians, 2 -> 3 Ps: task
// creates 7,696 -> 8,360/s, agent callbacks 7,724 -> 8,380/s. Reads gain too: in 2
// interleaved pairs of full runs, with 16 clients, lists of 50 went from 14,475-14,661
// to 17,114-17,328 requests a second, and gets from 13,525-15,257 to 16,672-16,986.
//
// It is set once the store is open, so that the read pool keeps its size on the CPU
// count. An explicit GOMAXPROCS in the environment is left alone. Setting it ends the
// runtime's own updates when a container's CPU limit changes: the server keeps the
// count it started with.
func spareProc() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
}
