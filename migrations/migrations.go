// Package migrations embeds the goose SQL migrations that shape the agentdesk database.
// The store applies them on start; files are never edited once released, only added.
package migrations

import "embed"

//go:embed *.sql
var FS embed.FS
