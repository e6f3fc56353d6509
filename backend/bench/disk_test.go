package main

import "testing"

// TestWriterStats reads the server's "stopped cleanly" line as backend/server writes it.
func TestWriterStats(t *testing.T) {
	line := `time=2026-11-24T05:17:09.715Z level=INFO msg="stopped cleanly" writes=66582 batches=10695 fsyncs=10695 writer_exec=6.142s writer_commit=1.652s fsync=7.526s`
	perBatch, fsync, ok := writerStats("earlier lines\n" + line + "\n")
	if !ok || perBatch < 6.22 || perBatch > 6.23 || fsync < 0.703 || fsync > 0.704 {
		t.Fatalf("writerStats = %.3f, %.3f, %v; want 6.225, 0.704, true", perBatch, fsync, ok)
	}
	if _, _, ok := writerStats("no such line"); ok {
		t.Fatal("a log without the line gave stats")
	}
}
