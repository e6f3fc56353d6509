package errs_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// One table of statuses serves REST and /graphql: every code has one, and an
// Unavailable error is a 503 whatever wraps it.
func TestHTTPStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{errs.Invalid("x"), http.StatusBadRequest},
		{errs.Unauth("x"), http.StatusUnauthorized},
		{errs.Forbid("x"), http.StatusForbidden},
		{errs.Missing("x"), http.StatusNotFound},
		{errs.Conflicting("x"), http.StatusConflict},
		{errs.TooLarge("x"), http.StatusRequestEntityTooLarge},
		{&errs.Error{Code: errs.RateLimited}, http.StatusTooManyRequests},
		{errs.Precondition("x"), http.StatusPreconditionFailed},
		{errs.NotAllowed("x"), http.StatusMethodNotAllowed},
		{errs.NoSpace("x"), http.StatusInsufficientStorage},
		{&errs.Error{Code: errs.Internal}, http.StatusInternalServerError},
		{errors.New("disk on fire"), http.StatusInternalServerError},
		{errs.Unavailable("x"), http.StatusServiceUnavailable},
		{fmt.Errorf("write: %w", errs.Unavailable("x")), http.StatusServiceUnavailable},
		{fmt.Errorf("lookup: %w", errs.Missing("x")), http.StatusNotFound},
	} {
		if got := errs.HTTPStatus(tc.err); got != tc.want {
			t.Errorf("HTTPStatus(%v [%s]) = %d, want %d", tc.err, errs.CodeOf(tc.err), got, tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 documents", 1: "1 document", 2: "2 documents"} {
		if got := errs.Count(n, "document"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
