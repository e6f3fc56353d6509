// Command printschema writes the GraphQL schema's SDL to the file named by its argument
// (or standard output); `go generate ./backend/graphql` runs it.
package main

import (
	"fmt"
	"os"

	agql "github.com/agentdesk/agentdesk/backend/graphql"
)

func main() {
	schema, err := agql.NewSchema(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "printschema:", err)
		os.Exit(1)
	}
	sdl := agql.PrintSchema(&schema)
	if len(os.Args) < 2 {
		fmt.Print(sdl)
		return
	}
	if err := os.WriteFile(os.Args[1], []byte(sdl), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "printschema:", err)
		os.Exit(1)
	}
}
