// Package version names this build. The Makefile sets its variables from git with
// -ldflags "-X github.com/agentdesk/agentdesk/backend/version.Version=0.3.0 -X ...Commit=... -X ...Date=...";
// a plain `go build` leaves them saying it is a development build.
package version

// Version is the release this build was made from ("0.3.0", from the tag v0.3.0;
// "0.3.0-2-gabc1234" two commits after it), or "dev" for a build of an untagged tree.
var Version = "dev"

// Commit is the git commit built ("-dirty" when the tree had changes), or "unknown".
var Commit = "unknown"

// Date is when the binary was built (RFC 3339, UTC), or "unknown".
var Date = "unknown"

// String is the one line `agentdesk version` prints.
func String() string {
	return "agentdesk " + Version + " (commit " + Commit + ", built " + Date + ")"
}
