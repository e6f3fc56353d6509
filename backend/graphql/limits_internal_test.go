package graphql

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"
)

// TestWebUIQueriesWithinLimits: every query the web UI sends (frontend/src/lib/api.ts,
// read from the source so that a new one is checked too) passes the limits, counted at
// their worst: lists at their caps, page sizes at their defaults.
func TestWebUIQueriesWithinLimits(t *testing.T) {
	raw, err := os.ReadFile("../../frontend/src/lib/api.ts")
	if err != nil {
		t.Fatal(err)
	}
	src := string(raw)
	consts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^const ([A-Z]+) = '([^']*)';`).FindAllStringSubmatch(src, -1) {
		consts[m[1]] = m[2]
	}
	// gql<...>('...') or gql(`...`), up to the closing quote (the UI's queries have no
	// escapes), when that string is the whole query: the reactions query, built from
	// pieces, is modelled below.
	calls := regexp.MustCompile("gql(?:WithProgress)?(?:<[^(]*>)?\\(\\s*(?:'([^']*)'|`([^`]*)`)\\s*[,)]")
	expand := regexp.MustCompile(`\$\{(\w+)\}`)
	queries := []string{}
	for _, m := range calls.FindAllStringSubmatch(src, -1) {
		q := m[1] + m[2]
		q = expand.ReplaceAllStringFunc(q, func(ref string) string {
			name := ref[2 : len(ref)-1]
			if v, ok := consts[name]; ok {
				return v
			}
			if name == "m" { // createToken's mutation name
				return "createPlatformToken"
			}
			t.Fatalf("unknown ${%s} in %s", name, q)
			return ""
		})
		queries = append(queries, q)
	}
	if len(queries) < 40 {
		t.Fatalf("found %d queries in api.ts; has the way it calls gql changed?", len(queries))
	}
	// Conversations.svelte asks for the reactions of every message of the thread that
	// has some, one alias each: as many as MaxFields lets through.
	var reactions strings.Builder
	reactions.WriteString("{ ")
	for i := range MaxFields / 5 {
		reactions.WriteString("m" + strconv.Itoa(i) + ": reactions(messageId: " + strconv.Itoa(i) + ") { actor actorKind emoji messageId } ")
	}
	queries = append(queries, reactions.String()+"}")

	schema, err := NewSchema(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(q)})})
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if err := checkLimits(&schema, doc, nil); err != nil {
			t.Errorf("the web UI's query is refused: %v\n%s", err, q)
		}
	}
}

// TestLiteralDepth: lists and objects count one level each, scalars none.
func TestLiteralDepth(t *testing.T) {
	for q, want := range map[string]int{
		`{ f(a: 1) }`:                     0,
		`{ f(a: [1, 2]) }`:                1,
		`{ f(a: [[1], 2]) }`:              2,
		`{ f(a: {b: [{c: [1]}]}) }`:       4,
		`{ f(a: [[[[[[[[[[1]]]]]]]]]]) }`: MaxLiteralDepth + 1, // it stops counting past the limit
	} {
		doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(q)})})
		if err != nil {
			t.Fatal(err)
		}
		arg := doc.Definitions[0].(*ast.OperationDefinition).SelectionSet.Selections[0].(*ast.Field).Arguments[0]
		if got := literalDepth(arg.Value, 0); got != want {
			t.Errorf("%s: depth %d, want %d", q, got, want)
		}
	}
}
