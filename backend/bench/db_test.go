package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBReachesTheBinary: with -db, the command line that prepares the projects and the
// server get the database as AGENTDESK_DB, and the log shows it without its password.
func TestDBReachesTheBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-agentdesk")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"db=$AGENTDESK_DB\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const db = "postgres://bench:secret@127.0.0.1:5432/bench"
	out, err := (&server{bin: bin, dir: dir, db: db}).cli("project", "list")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "db="+db {
		t.Fatalf("the binary saw %q", got)
	}
	t.Setenv("AGENTDESK_DB", "")
	if out, _ := (&server{bin: bin, dir: dir}).cli("project", "list"); strings.TrimSpace(string(out)) != "db=" {
		t.Fatalf("without -db the binary saw %q", out)
	}
	if r := redactedDB(db); strings.Contains(r, "secret") || !strings.Contains(r, "127.0.0.1:5432/bench") {
		t.Fatalf("redacted: %q", r)
	}
	if engineOf(db) != "postgres" || engineOf("") != "sqlite" {
		t.Fatal("engineOf")
	}
}

// TestLoaderAlternates: with two servers (-instances 2), the timed requests and the
// fan-out's subscribers take turns between them.
func TestLoaderAlternates(t *testing.T) {
	l := newLoader("http://127.0.0.1:1", "http://127.0.0.1:2")
	seen := map[string]int{}
	for range 10 {
		seen[l.rawFor().addr]++
	}
	if seen["127.0.0.1:1"] != 5 || seen["127.0.0.1:2"] != 5 {
		t.Fatalf("requests went %v", seen)
	}
	if l.baseOf(0) != "http://127.0.0.1:1" || l.baseOf(1) != "http://127.0.0.1:2" || l.baseOf(2) != "http://127.0.0.1:1" {
		t.Fatal("baseOf does not alternate")
	}
	if one := newLoader("http://127.0.0.1:1"); one.rawFor() != one.raw || one.baseOf(1) != one.base {
		t.Fatal("one server: everything goes to it")
	}
}
