package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// diskSyncLatency times n appends of 4 KiB, each followed by an fsync, to a file in
// dir (the data directory's disk), and returns the median in milliseconds. Every
// durable write waits for a flush of the WAL, so the write figures move with the disk:
// the report gives this probe before and after the run, and the server's own mean fsync
// (longer: a batch's WAL frames are tens of KiB, and the writer appends the next batch
// meanwhile), which on this VM has varied from 0.35 to 1.1 ms between runs of the same
// binary, moving creates/s by more than code changes did (docs/performance.md).
func diskSyncLatency(dir string, n int) (float64, error) {
	f, err := os.OpenFile(filepath.Join(dir, "fsync-probe"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	page := make([]byte, 4096)
	took := make([]float64, 0, n)
	for range n {
		start := time.Now()
		if _, err := f.Write(page); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
		took = append(took, float64(time.Since(start).Microseconds())/1000)
	}
	sort.Float64s(took)
	return took[len(took)/2], nil
}

// writerStats reads the group commit's totals from the server's last "stopped cleanly"
// log line: writes per batch and the mean fsync, over the whole run.
func writerStats(log string) (writesPerBatch, fsyncMs float64, ok bool) {
	m := regexp.MustCompile(`writes=(\d+) batches=(\d+) fsyncs=(\d+) .*fsync=(\S+)`).FindStringSubmatch(log)
	if m == nil {
		return 0, 0, false
	}
	writes, _ := strconv.ParseFloat(m[1], 64)
	batches, _ := strconv.ParseFloat(m[2], 64)
	syncs, _ := strconv.ParseFloat(m[3], 64)
	total, err := time.ParseDuration(m[4])
	if err != nil || batches == 0 || syncs == 0 {
		return 0, 0, false
	}
	return writes / batches, float64(total.Microseconds()) / 1000 / syncs, true
}

// dataDir makes the run's temporary data directory; done removes it, or with -keep says
// where it is.
func dataDir(cfg config, prefix string) (dir string, done func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if cfg.keepDataDirs {
		return dir, func() { logf("data directory and server log kept in %s", dir) }, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
