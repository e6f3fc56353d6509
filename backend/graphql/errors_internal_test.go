package graphql

import (
	"context"
	"errors"
	"strings"
	"testing"

	gql "github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
)

func TestInternalErrorsDoNotLeak(t *testing.T) {
	err := publicError(context.Background(), errors.New("SQL logic error: no such table: secret_tokens"))
	var ce *codedError
	if !errors.As(err, &ce) || ce.code != errs.Internal || strings.Contains(ce.Error(), "secret") {
		t.Fatalf("internal error shown as %v", err)
	}
	err = publicError(context.Background(), errs.Missing("task 7 not found"))
	if !errors.As(err, &ce) || ce.code != errs.NotFound || ce.Error() != "task 7 not found" {
		t.Fatalf("service error shown as %v", err)
	}

	// A field error without a code (a panic, a broken non-null promise) is internal.
	list := executionErrors(context.Background(), []gqlerrors.FormattedError{
		{Message: "runtime error: index out of range [3]", Path: []any{"tasks", 0}},
		{Message: `Variable "$s" got invalid value "x".`},
	})
	if list[0].Extensions["code"] != "internal" || strings.Contains(list[0].Message, "runtime") {
		t.Fatalf("panic shown as %+v", list[0])
	}
	if list[1].Extensions["code"] != "invalid_argument" || !strings.Contains(list[1].Message, "$s") {
		t.Fatalf("variable error shown as %+v", list[1])
	}
}

func TestResolverPanicIsInternal(t *testing.T) {
	fn := resolve(func(p gql.ResolveParams, _ *auth.Principal) (any, error) { panic("boom: secret") })
	_, err := fn(gql.ResolveParams{Context: context.Background()})
	var ce *codedError
	if !errors.As(err, &ce) || ce.code != errs.Internal || strings.Contains(ce.Error(), "secret") {
		t.Fatalf("panic shown as %v", err)
	}
}
