package graphql

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/location"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// codedError is an error with a contract code; graphql-go copies Extensions into the
// error's extensions.
type codedError struct {
	code errs.Code
	msg  string
}

func (e *codedError) Error() string { return e.msg }

func (e *codedError) Extensions() map[string]any { return map[string]any{"code": string(e.code)} }

// publicError maps a service error to one that is safe to show: errs.Error keeps its
// code and sentence; anything else is logged and becomes a bare internal error.
func publicError(ctx context.Context, err error) error {
	code, msg := errs.Public(err)
	if code == errs.Internal {
		slog.ErrorContext(ctx, "graphql resolver", "err", err)
	}
	return &codedError{code: code, msg: msg}
}

type panicError struct{ v any }

func (p panicError) Error() string { return fmt.Sprintf("panic: %v", p.v) }

// errorList is the errors of a response. graphql-go's FormattedError writes
// "locations": null when an error has none, which some clients cannot read; the spec
// says to leave the key out, so the list is written in its own shape.
type errorList []gqlerrors.FormattedError

type errorJSON struct {
	Message    string                    `json:"message"`
	Locations  []location.SourceLocation `json:"locations,omitempty"`
	Path       []any                     `json:"path,omitempty"`
	Extensions map[string]any            `json:"extensions,omitempty"`
}

func (l errorList) MarshalJSON() ([]byte, error) {
	out := make([]errorJSON, len(l))
	for i, e := range l {
		out[i] = errorJSON{Message: e.Message, Locations: e.Locations, Path: e.Path, Extensions: e.Extensions}
	}
	return json.Marshal(out)
}

// gqlError is one error of a response, in the GraphQL spec's shape.
func gqlError(code errs.Code, msg string) gqlerrors.FormattedError {
	return gqlerrors.FormattedError{Message: msg, Extensions: map[string]any{"code": string(code)}}
}

// requestErrors gives codes to errors of parsing and validation: the request is wrong.
func requestErrors(list []gqlerrors.FormattedError) []gqlerrors.FormattedError {
	for i := range list {
		if list[i].Extensions == nil {
			list[i].Extensions = map[string]any{"code": string(errs.InvalidArgument)}
		}
	}
	return list
}

// executionErrors gives every execution error a code. Errors of resolvers already have
// one; an error without a path happened before any field ran (variable coercion: the
// request is wrong); anything else (a panic, a broken non-null promise) is internal and
// its text is replaced.
func executionErrors(ctx context.Context, list []gqlerrors.FormattedError) []gqlerrors.FormattedError {
	for i := range list {
		if _, ok := list[i].Extensions["code"]; ok {
			continue
		}
		if len(list[i].Path) == 0 {
			list[i].Extensions = map[string]any{"code": string(errs.InvalidArgument)}
			continue
		}
		slog.ErrorContext(ctx, "graphql execution", "err", list[i].Message, "path", list[i].Path)
		list[i].Message = "internal error; the server log has the details"
		list[i].Extensions = map[string]any{"code": string(errs.Internal)}
	}
	return list
}
