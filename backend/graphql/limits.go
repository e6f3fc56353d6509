package graphql

import (
	"fmt"
	"strconv"
	"strings"

	gql "github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
)

// Limits on a request, checked on the parsed document before validation and execution,
// so that an abusive query costs the server next to nothing.
const (
	// MaxQueryBytes bounds the query text.
	MaxQueryBytes = 64 << 10
	// MaxBodyBytes bounds the whole request body (query, variables, operation name).
	MaxBodyBytes = 1 << 20
	// MaxDepth bounds how deeply fields nest; `{ projects { id } }` has depth 2. It leaves
	// room for the usual introspection query (depth 13, its ofType chain).
	MaxDepth = 15
	// MaxCost bounds the estimated work of an operation: every field costs 1, and a list
	// field multiplies what it selects by its page size (first, else DefaultPageSize) or,
	// for lists without paging, by UnpagedListFactor.
	MaxCost = 10_000
	// MaxFields bounds the fields written in the document (aliases and fragments
	// included, before expansion): graphql-go's validation is quadratic in them.
	MaxFields = 1000
	// UnpagedListFactor is the size assumed for lists without a first argument (steps,
	// agents, tokens, ...). Introspection lists count 1: they are bounded by the schema.
	UnpagedListFactor = 10
)

// limitError is a request that breaks a limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// checkLimits computes the depth and cost of every operation of doc (fragments
// expanded, each one once) and fails when one is over its limit.
func checkLimits(schema *gql.Schema, doc *ast.Document, vars map[string]any) error {
	a := analyser{schema: schema, vars: vars, fragments: map[string]*ast.FragmentDefinition{}, memo: map[string]measure{}}
	fieldCount := 0
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.FragmentDefinition:
			if d.Name != nil {
				a.fragments[d.Name.Value] = d
			}
			fieldCount += countFields(d.SelectionSet)
		case *ast.OperationDefinition:
			fieldCount += countFields(d.SelectionSet)
		}
	}
	if fieldCount > MaxFields {
		return &limitError{fmt.Sprintf("the document has %d fields, at most %d are allowed", fieldCount, MaxFields)}
	}
	for _, d := range doc.Definitions {
		op, ok := d.(*ast.OperationDefinition)
		if !ok {
			continue
		}
		var root *gql.Object
		switch op.Operation {
		case ast.OperationTypeMutation:
			root = schema.MutationType()
		case ast.OperationTypeSubscription:
			root = schema.SubscriptionType()
		default:
			root = schema.QueryType()
		}
		m, err := a.selectionSet(op.SelectionSet, root, 0)
		if err != nil {
			return err
		}
		name := "the operation"
		if op.Name != nil {
			name = "operation " + op.Name.Value
		}
		if m.depth > MaxDepth {
			return &limitError{fmt.Sprintf("%s is too deep: fields nest %d levels, at most %d are allowed", name, m.depth, MaxDepth)}
		}
		if m.cost > MaxCost {
			return &limitError{fmt.Sprintf("%s is too expensive: its estimated cost is %s, at most %d is allowed; ask for fewer items (first) or fewer nested lists", name, costString(m.cost), MaxCost)}
		}
	}
	return nil
}

// countFields counts the fields written in ss, fragments not expanded.
func countFields(ss *ast.SelectionSet) int {
	if ss == nil {
		return 0
	}
	n := 0
	for _, sel := range ss.Selections {
		switch s := sel.(type) {
		case *ast.Field:
			n += 1 + countFields(s.SelectionSet)
		case *ast.InlineFragment:
			n += countFields(s.SelectionSet)
		}
	}
	return n
}

func costString(c int) string {
	if c > MaxCost*1000 {
		return "over " + strconv.Itoa(MaxCost*1000)
	}
	return strconv.Itoa(c)
}

type measure struct{ cost, depth int }

type analyser struct {
	schema    *gql.Schema
	vars      map[string]any
	fragments map[string]*ast.FragmentDefinition
	memo      map[string]measure
	visiting  []string
}

// saturate keeps costs from overflowing: anything past it is over every limit anyway.
const saturate = MaxCost * 1000

func capped(c int) int { return min(c, saturate) }

func (a *analyser) selectionSet(ss *ast.SelectionSet, parent gql.Type, level int) (measure, error) {
	var out measure
	if ss == nil {
		return out, nil
	}
	if level > MaxDepth {
		// Deeper than allowed: stop walking, the caller reports the depth.
		return measure{cost: 1, depth: 1}, nil
	}
	for _, sel := range ss.Selections {
		var m measure
		var err error
		switch s := sel.(type) {
		case *ast.Field:
			m, err = a.field(s, parent, level)
		case *ast.InlineFragment:
			m, err = a.selectionSet(s.SelectionSet, a.typeCondition(s.TypeCondition, parent), level)
		case *ast.FragmentSpread:
			m, err = a.spread(s)
		}
		if err != nil {
			return out, err
		}
		out.cost = capped(out.cost + m.cost)
		out.depth = max(out.depth, m.depth)
	}
	return out, nil
}

func (a *analyser) spread(s *ast.FragmentSpread) (measure, error) {
	if s.Name == nil {
		return measure{}, nil
	}
	name := s.Name.Value
	if m, ok := a.memo[name]; ok {
		return m, nil
	}
	for _, v := range a.visiting {
		if v == name {
			return measure{}, &limitError{fmt.Sprintf("fragment %s spreads itself (%s)", name, strings.Join(append(a.visiting, name), " -> "))}
		}
	}
	f, ok := a.fragments[name]
	if !ok {
		return measure{}, nil // validation reports it
	}
	a.visiting = append(a.visiting, name)
	// A fragment is measured from level 0 and memoized: its depth adds to where it is used.
	m, err := a.selectionSet(f.SelectionSet, a.typeCondition(f.TypeCondition, nil), 0)
	a.visiting = a.visiting[:len(a.visiting)-1]
	if err != nil {
		return m, err
	}
	a.memo[name] = m
	return m, nil
}

func (a *analyser) typeCondition(n *ast.Named, parent gql.Type) gql.Type {
	if n == nil || n.Name == nil {
		return parent
	}
	if t := a.schema.Type(n.Name.Value); t != nil {
		return t
	}
	return parent
}

func (a *analyser) field(f *ast.Field, parent gql.Type, level int) (measure, error) {
	if f.SelectionSet == nil {
		return measure{cost: 1, depth: 1}, nil
	}
	def := a.fieldDef(f, parent)
	var child gql.Type
	factor := 1
	if def != nil {
		named := gql.GetNamed(def.Type)
		child, _ = named.(gql.Type)
		if isList(def.Type) && child != nil && !strings.HasPrefix(child.Name(), "__") {
			factor = UnpagedListFactor
			for _, arg := range def.Args {
				if arg.Name() == "first" {
					factor = a.first(f)
				}
			}
		}
	}
	inner, err := a.selectionSet(f.SelectionSet, child, level+1)
	if err != nil {
		return inner, err
	}
	return measure{cost: capped(factor * capped(1+inner.cost)), depth: 1 + inner.depth}, nil
}

// first is the page size a field asks for: its first argument, literal or variable.
func (a *analyser) first(f *ast.Field) int {
	for _, arg := range f.Arguments {
		if arg.Name == nil || arg.Name.Value != "first" {
			continue
		}
		switch v := arg.Value.(type) {
		case *ast.IntValue:
			if n, err := strconv.Atoi(v.Value); err == nil && n > 0 {
				return min(n, saturate)
			}
		case *ast.Variable:
			if v.Name != nil {
				switch n := a.vars[v.Name.Value].(type) {
				case float64:
					if n >= 1 {
						return int(min(n, saturate))
					}
				case int:
					if n >= 1 {
						return min(n, saturate)
					}
				}
			}
		}
	}
	return DefaultPageSize
}

func (a *analyser) fieldDef(f *ast.Field, parent gql.Type) *gql.FieldDefinition {
	if f.Name == nil {
		return nil
	}
	switch f.Name.Value {
	case gql.SchemaMetaFieldDef.Name:
		return gql.SchemaMetaFieldDef
	case gql.TypeMetaFieldDef.Name:
		return gql.TypeMetaFieldDef
	}
	var fields gql.FieldDefinitionMap
	switch t := parent.(type) {
	case *gql.Object:
		fields = t.Fields()
	case *gql.Interface:
		fields = t.Fields()
	default:
		return nil
	}
	return fields[f.Name.Value]
}

func isList(t gql.Type) bool {
	for {
		switch w := t.(type) {
		case *gql.NonNull:
			t = w.OfType
		case *gql.List:
			return true
		default:
			return false
		}
	}
}
