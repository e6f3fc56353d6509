package main

import (
	"bytes"
	"os"
	"testing"
)

// TestLicenses: docs/licenses.md is what `make licenses` writes today, and every license
// in it is allowed. After a dependency changes: make licenses.
func TestLicenses(t *testing.T) {
	var got bytes.Buffer
	if err := write(&got, "../.."); err != nil {
		t.Errorf("%v", err)
	}
	want, err := os.ReadFile("../../docs/licenses.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("docs/licenses.md is stale: run make licenses")
	}
}

func TestClassify(t *testing.T) {
	for file, want := range map[string]string{
		"../../LICENSE":                       "Apache-2.0",
		"/usr/share/common-licenses/MPL-2.0":  "MPL-2.0",
		"/usr/share/common-licenses/GPL-3":    "",
		"/usr/share/common-licenses/LGPL-2.1": "",
	} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := classify(string(text)); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	for expr, want := range map[string]bool{
		"MIT": true, "(MPL-2.0 OR Apache-2.0)": true, "GPL-3.0 OR MIT": true, "MIT AND GPL-3.0": false,
		"GPL-3.0": false, "none given": false, "unknown (COPYING)": false, "AGPL-3.0-only": false,
	} {
		if got := permitted(expr); got != want {
			t.Errorf("permitted(%q) = %v, want %v", expr, got, want)
		}
	}
}
