// Package docs holds the documents the binary itself serves.
package docs

import _ "embed"

// Licenses is licenses.md: the third-party licenses the binary carries, served at /licenses.
//
//go:embed licenses.md
var Licenses []byte
