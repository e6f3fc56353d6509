// Package version is agentdesk's version, set at build time with
// -ldflags "-X github.com/agentdesk/agentdesk/backend/version.Version=1.2.3".
package version

// Version of this build.
var Version = "0.1.0-dev"
