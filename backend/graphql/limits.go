package graphql

import (
	"fmt"
	"strconv"
	"strings"

	gql "github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
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
	// MaxLiteralDepth bounds how deeply list and object literals nest (`[[1]]` is 2):
	// graphql-go's validation prints a literal at every level of it, which is cubic.
	MaxLiteralDepth = 8
	// MaxCost bounds the estimated work of an operation: every field costs 1, and a list
	// field multiplies what it selects by the most items it can have (see listSize). A
	// page of 100 tasks with every field of their 500 steps and their conversation fits.
	MaxCost = 300_000
	// MaxFields bounds the fields written in the document (aliases and fragments
	// included, before expansion): graphql-go's validation is quadratic in them.
	MaxFields = 1000
	// MaxNodes bounds the nodes of the document (fields, fragments, arguments,
	// directives, variables and every value of a literal): graphql-go's validation
	// costs tens of microseconds a node. 500 steps written inline fit.
	MaxNodes = 2000
	// MaxArgumentComparisons bounds the work of validating fields that share a response
	// name and take arguments: graphql-go compares every pair of them by printing their
	// arguments. It is the sum, over such names, of (fields - 1) x (the nodes of their
	// arguments), and leaves room for every query a person writes; at most a few tens
	// of milliseconds.
	MaxArgumentComparisons = 5000
	// UnpagedListFactor is the size assumed for lists that have neither paging nor a
	// bound in the service (agents, skills, tokens, ...): the size of a page.
	// Introspection lists count 1: they are bounded by the schema.
	UnpagedListFactor = DefaultPageSize
)

// listCaps are the bounds the service puts on lists without paging ("Type.field").
var listCaps = map[string]int{
	"Task.steps":          service.MaxSteps,
	"Job.steps":           service.MaxSteps, // validated as a task's
	"Task.requiredSkills": service.MaxRequiredSkills,
	"Token.scopes":        len(auth.PlatformScopes) + len(auth.DataScopes),
	"Member.scopes":       len(auth.PlatformScopes) + len(auth.DataScopes),
	"Viewer.scopes":       len(auth.PlatformScopes) + len(auth.DataScopes),
	"UsageReport.byDay":   service.MaxUsageRangeDays,
	"Query.agentEnv":      10, // six variables, and the knowledge bases' line
	"Webhook.events":      service.MaxWebhookEvents,
}

// sizeArgs are the arguments that say how many items a paged list returns, with the
// size when they are left out.
var sizeArgs = map[string]int{"first": DefaultPageSize, "k": service.DefaultVectorK}

// limitError is a request that breaks a limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// checkLimits checks the literals of doc, then computes the depth and cost of every
// operation (fragments expanded, each one once) and fails when one is over its limit.
func checkLimits(schema *gql.Schema, doc *ast.Document, vars map[string]any) error {
	fragments := map[string]*ast.FragmentDefinition{}
	fieldCount := 0
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.FragmentDefinition:
			if d.Name != nil {
				fragments[d.Name.Value] = d
			}
			fieldCount += countFields(d.SelectionSet)
		case *ast.OperationDefinition:
			fieldCount += countFields(d.SelectionSet)
		default:
			// The spec's ExecutableDefinitions rule, which graphql-go lacks.
			return &limitError{fmt.Sprintf("the document may hold only operations and fragments, not a %s", strings.ToLower(d.GetKind()))}
		}
	}
	if fieldCount > MaxFields {
		return &limitError{fmt.Sprintf("the document has %d fields, at most %d are allowed", fieldCount, MaxFields)}
	}
	if err := checkLiterals(doc); err != nil {
		return err
	}
	if err := checkArgumentComparisons(doc); err != nil {
		return err
	}
	for _, d := range doc.Definitions {
		op, ok := d.(*ast.OperationDefinition)
		if !ok {
			continue
		}
		// Measured per operation: its variables' defaults decide the sizes of lists.
		a := analyser{schema: schema, vars: vars, defaults: map[string]ast.Value{}, fragments: fragments, memo: map[string]measure{}}
		for _, v := range op.VariableDefinitions {
			if v != nil && v.Variable != nil && v.Variable.Name != nil && v.DefaultValue != nil {
				a.defaults[v.Variable.Name.Value] = v.DefaultValue
			}
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

// checkLiterals fails when a literal value anywhere in the executable definitions of doc
// (arguments, directives, variable defaults) nests deeper than MaxLiteralDepth, or
// when the document has more than MaxNodes nodes.
func checkLiterals(doc *ast.Document) error {
	var values []ast.Value
	nodes := 0 // besides the values' own
	args := func(list []*ast.Argument) {
		nodes += len(list)
		for _, a := range list {
			if a != nil {
				values = append(values, a.Value)
			}
		}
	}
	directives := func(list []*ast.Directive) {
		nodes += len(list)
		for _, d := range list {
			if d != nil {
				args(d.Arguments)
			}
		}
	}
	varDefs := func(list []*ast.VariableDefinition) {
		nodes += len(list)
		for _, v := range list {
			if v != nil && v.DefaultValue != nil {
				values = append(values, v.DefaultValue)
			}
		}
	}
	var selections func(ss *ast.SelectionSet)
	selections = func(ss *ast.SelectionSet) {
		if ss == nil {
			return
		}
		nodes += len(ss.Selections)
		for _, sel := range ss.Selections {
			switch s := sel.(type) {
			case *ast.Field:
				args(s.Arguments)
				directives(s.Directives)
				selections(s.SelectionSet)
			case *ast.InlineFragment:
				directives(s.Directives)
				selections(s.SelectionSet)
			case *ast.FragmentSpread:
				directives(s.Directives)
			}
		}
	}
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.OperationDefinition:
			varDefs(d.VariableDefinitions)
			directives(d.Directives)
			selections(d.SelectionSet)
		case *ast.FragmentDefinition:
			varDefs(d.VariableDefinitions)
			directives(d.Directives)
			selections(d.SelectionSet)
		}
	}
	for _, v := range values {
		if literalDepth(v, 0) > MaxLiteralDepth {
			return &limitError{fmt.Sprintf("a literal value nests lists and objects more than %d levels deep; send deep values as variables, or flatten them", MaxLiteralDepth)}
		}
	}
	for _, v := range values { // shallow now, so counting is cheap
		nodes += valueNodes(v)
	}
	if nodes > MaxNodes {
		return &limitError{fmt.Sprintf("the document has %d nodes (fields, arguments, values, ...), at most %d are allowed; send large values as variables", nodes, MaxNodes)}
	}
	return nil
}

// checkArgumentComparisons fails when fields sharing a response name (an alias, else the
// field's name) carry so many arguments that validating them would be slow (see
// MaxArgumentComparisons). Fields are counted as written, wherever they are.
func checkArgumentComparisons(doc *ast.Document) error {
	type group struct{ fields, nodes int }
	groups := map[string]*group{}
	var walk func(ss *ast.SelectionSet)
	walk = func(ss *ast.SelectionSet) {
		if ss == nil {
			return
		}
		for _, sel := range ss.Selections {
			switch s := sel.(type) {
			case *ast.Field:
				if len(s.Arguments) > 0 {
					name := ""
					if s.Alias != nil {
						name = s.Alias.Value
					} else if s.Name != nil {
						name = s.Name.Value
					}
					g := groups[name]
					if g == nil {
						g = &group{}
						groups[name] = g
					}
					g.fields++
					for _, a := range s.Arguments {
						if a != nil {
							g.nodes += 1 + valueNodes(a.Value)
						}
					}
				}
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			}
		}
	}
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.OperationDefinition:
			walk(d.SelectionSet)
		case *ast.FragmentDefinition:
			walk(d.SelectionSet)
		}
	}
	total := 0
	for name, g := range groups {
		total += (g.fields - 1) * g.nodes
		if total > MaxArgumentComparisons {
			return &limitError{fmt.Sprintf("%d fields named %s take arguments, which makes the document too slow to validate; give them distinct aliases", g.fields, name)}
		}
	}
	return nil
}

// valueNodes counts the nodes of a literal value.
func valueNodes(v ast.Value) int {
	n := 1
	switch v := v.(type) {
	case *ast.ListValue:
		for _, item := range v.Values {
			n += valueNodes(item)
		}
	case *ast.ObjectValue:
		for _, f := range v.Fields {
			if f != nil {
				n += valueNodes(f.Value)
			}
		}
	}
	return n
}

// literalDepth is how deeply lists and objects nest in v, counted from level and
// at most MaxLiteralDepth+1: it stops there, so a deep literal costs little.
func literalDepth(v ast.Value, level int) int {
	if level > MaxLiteralDepth {
		return level
	}
	deepest := level
	switch v := v.(type) {
	case *ast.ListValue:
		for _, item := range v.Values {
			deepest = max(deepest, literalDepth(item, level+1))
		}
		deepest = max(deepest, level+1)
	case *ast.ObjectValue:
		for _, f := range v.Fields {
			if f != nil {
				deepest = max(deepest, literalDepth(f.Value, level+1))
			}
		}
		deepest = max(deepest, level+1)
	}
	return deepest
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
	defaults  map[string]ast.Value // the operation's variable defaults
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
	def := a.fieldDef(f, parent)
	var child gql.Type
	factor := 1
	if def != nil {
		child, _ = gql.GetNamed(def.Type).(gql.Type)
		if isList(def.Type) && child != nil && !strings.HasPrefix(child.Name(), "__") {
			factor = a.listSize(f, parent, def)
		}
	}
	if f.SelectionSet == nil {
		return measure{cost: factor, depth: 1}, nil // a scalar, or a list of them
	}
	inner, err := a.selectionSet(f.SelectionSet, child, level+1)
	if err != nil {
		return inner, err
	}
	return measure{cost: capped(factor * capped(1+inner.cost)), depth: 1 + inner.depth}, nil
}

// listSize is the most items a list field can return: its page size (first, or k),
// else the service's bound on it, else UnpagedListFactor.
func (a *analyser) listSize(f *ast.Field, parent gql.Type, def *gql.FieldDefinition) int {
	for _, arg := range def.Args {
		if size, ok := sizeArgs[arg.Name()]; ok {
			if n, ok := a.intArg(f, arg.Name()); ok && n > 0 {
				return min(n, saturate)
			}
			return size
		}
	}
	if parent != nil {
		if n, ok := listCaps[parent.Name()+"."+def.Name]; ok {
			return n
		}
	}
	return UnpagedListFactor
}

// intArg is the value an Int argument of f will have once coerced, as graphql-go
// coerces it: a literal, or a variable's value, or, when that is missing or null, the
// variable's default.
func (a *analyser) intArg(f *ast.Field, name string) (int, bool) {
	for _, arg := range f.Arguments {
		if arg == nil || arg.Name == nil || arg.Name.Value != name {
			continue
		}
		var v any
		switch val := arg.Value.(type) {
		case *ast.Variable:
			if val.Name == nil {
				return 0, false
			}
			if given := a.vars[val.Name.Value]; given != nil {
				v = gql.Int.ParseValue(given)
			} else if def := a.defaults[val.Name.Value]; def != nil {
				v = gql.Int.ParseLiteral(def)
			}
		default:
			v = gql.Int.ParseLiteral(val)
		}
		n, ok := v.(int)
		return n, ok
	}
	return 0, false
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
