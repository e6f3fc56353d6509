// Package errs is the one error type that crosses agentdesk's layers. The service layer
// returns it; REST and GraphQL translate its Code into a status and an error body.
package errs

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Code is one of the contract's error codes.
type Code string

const (
	InvalidArgument Code = "invalid_argument"
	Unauthenticated Code = "unauthenticated"
	Forbidden       Code = "forbidden"
	NotFound        Code = "not_found"
	Conflict        Code = "conflict"
	PayloadTooLarge Code = "payload_too_large"
	RateLimited     Code = "rate_limited"
	// PreconditionFailed: an If-Match precondition does not hold (HTTP 412); the
	// object changed since the caller read it.
	PreconditionFailed Code = "precondition_failed"
	// MethodNotAllowed: a known path and a method it lacks (REST only).
	MethodNotAllowed Code = "method_not_allowed"
	// InsufficientStorage: the disk holding the database is full, so a write was not
	// saved (HTTP 507); writes work again once there is space.
	InsufficientStorage Code = "insufficient_storage"
	Internal            Code = "internal"
)

// Error is a failure a caller can act on: Message is a sentence meant for people and
// never carries SQL, stack traces or secrets.
type Error struct {
	Code    Code
	Message string

	unavailable bool          // see Unavailable
	retryAfter  time.Duration // see Limited
}

func (e *Error) Error() string { return e.Message }

func newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func Invalid(format string, args ...any) *Error     { return newf(InvalidArgument, format, args...) }
func Unauth(format string, args ...any) *Error      { return newf(Unauthenticated, format, args...) }
func Forbid(format string, args ...any) *Error      { return newf(Forbidden, format, args...) }
func Missing(format string, args ...any) *Error     { return newf(NotFound, format, args...) }
func Conflicting(format string, args ...any) *Error { return newf(Conflict, format, args...) }
func TooLarge(format string, args ...any) *Error    { return newf(PayloadTooLarge, format, args...) }
func NotAllowed(format string, args ...any) *Error  { return newf(MethodNotAllowed, format, args...) }
func NoSpace(format string, args ...any) *Error     { return newf(InsufficientStorage, format, args...) }
func Precondition(format string, args ...any) *Error {
	return newf(PreconditionFailed, format, args...)
}

// Limited is a rate_limited error: the caller may try again after retryAfter, which
// HTTP answers say in Retry-After.
func Limited(retryAfter time.Duration, format string, args ...any) *Error {
	e := newf(RateLimited, format, args...)
	e.retryAfter = retryAfter
	return e
}

// RetryAfterSeconds is the Retry-After of a Limited error, in whole seconds (at least
// 1), and whether err is one.
func RetryAfterSeconds(err error) (int, bool) {
	var e *Error
	if !errors.As(err, &e) || e.Code != RateLimited {
		return 0, false
	}
	return max(1, int((e.retryAfter+time.Second-1)/time.Second)), true
}

// HTTPStatus is the HTTP status that answers err on REST and /graphql: its code's
// status, and 503 for an Unavailable error. Anything that is not an *Error is a 500.
func HTTPStatus(err error) int {
	if IsUnavailable(err) {
		return http.StatusServiceUnavailable
	}
	return statusOf[CodeOf(err)]
}

var statusOf = map[Code]int{
	InvalidArgument:     http.StatusBadRequest,
	Unauthenticated:     http.StatusUnauthorized,
	Forbidden:           http.StatusForbidden,
	NotFound:            http.StatusNotFound,
	Conflict:            http.StatusConflict,
	PayloadTooLarge:     http.StatusRequestEntityTooLarge,
	RateLimited:         http.StatusTooManyRequests,
	PreconditionFailed:  http.StatusPreconditionFailed,
	MethodNotAllowed:    http.StatusMethodNotAllowed,
	InsufficientStorage: http.StatusInsufficientStorage,
	Internal:            http.StatusInternalServerError,
}

// CodeOf reports the code of err, Internal for anything that is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Public returns the code and a message that is safe to show: an internal error's text
// is replaced, since it may hold details of the machine or the database.
func Public(err error) (Code, string) {
	var e *Error
	if errors.As(err, &e) && (e.Code != Internal || e.unavailable) {
		return e.Code, e.Message
	}
	return Internal, "internal error; the server log has the details"
}

// Unavailable is an internal error whose sentence is shown (it says what happened and
// what to do, and carries no detail of the machine) and that REST answers with 503: the
// server cannot take the request now, e.g. its writer stopped after a failed fsync.
func Unavailable(format string, args ...any) *Error {
	e := newf(Internal, format, args...)
	e.unavailable = true
	return e
}

// IsUnavailable reports whether err is, or wraps, an Unavailable error.
func IsUnavailable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.unavailable
}

// Count is n and a noun that takes -s in the plural, for messages: "1 dimension",
// "3 dimensions".
func Count(n int, noun string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
