package graphql

import (
	"sync"

	gql "github.com/graphql-go/graphql"
)

// graphql-go 0.8.1 answers introspection as the 2018 spec did. Tools that load a schema
// by introspection (GraphiQL 2+, graphql-js's getIntrospectionQuery with its options,
// Apollo, codegen) ask for what the spec added since, and fail on "Cannot query field"
// when it is missing. modernIntrospection adds it to graphql-go's own introspection
// types, the way graphql-go builds them itself (AddFieldConfig), before any schema is
// made: every answer is the true one for this server, which declares no custom scalar
// URL, no repeatable directive, no @oneOf input and no deprecated argument or input field.
var modernIntrospection = sync.OnceFunc(func() {
	gql.SchemaType.AddFieldConfig("description", &gql.Field{Type: gql.String,
		Resolve: func(gql.ResolveParams) (any, error) { return nil, nil }})
	gql.TypeType.AddFieldConfig("specifiedByURL", &gql.Field{Type: gql.String,
		Resolve: func(gql.ResolveParams) (any, error) { return nil, nil }})
	gql.TypeType.AddFieldConfig("isOneOf", &gql.Field{Type: gql.Boolean,
		Resolve: func(p gql.ResolveParams) (any, error) {
			if _, ok := p.Source.(*gql.InputObject); ok {
				return false, nil
			}
			return nil, nil // null for every other kind, as the spec says
		}})
	gql.DirectiveType.AddFieldConfig("isRepeatable", &gql.Field{Type: gql.NewNonNull(gql.Boolean),
		Resolve: func(gql.ResolveParams) (any, error) { return false, nil }})
	// Deprecated arguments and input fields: none here, so includeDeprecated changes
	// nothing and each says it is not deprecated.
	gql.InputValueType.AddFieldConfig("isDeprecated", &gql.Field{Type: gql.NewNonNull(gql.Boolean),
		Resolve: func(gql.ResolveParams) (any, error) { return false, nil }})
	gql.InputValueType.AddFieldConfig("deprecationReason", &gql.Field{Type: gql.String,
		Resolve: func(gql.ResolveParams) (any, error) { return nil, nil }})
	withIncludeDeprecated(gql.FieldType, "args")
	withIncludeDeprecated(gql.DirectiveType, "args")
	withIncludeDeprecated(gql.TypeType, "inputFields")
})

// withIncludeDeprecated gives field of object an includeDeprecated argument, keeping
// its type and graphql-go's resolver.
func withIncludeDeprecated(object *gql.Object, field string) {
	def := object.Fields()[field]
	object.AddFieldConfig(field, &gql.Field{Type: def.Type, Resolve: def.Resolve, Description: def.Description,
		Args: gql.FieldConfigArgument{"includeDeprecated": {Type: gql.Boolean, DefaultValue: false}}})
}
