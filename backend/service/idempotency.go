package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"regexp"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/store"
)

var idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// CheckIdempotencyKey validates an Idempotency-Key; "" means none was given.
func CheckIdempotencyKey(key string) error {
	if key != "" && !idempotencyKeyPattern.MatchString(key) {
		return errs.Invalid("Idempotency-Key must be 1 to 128 characters of A-Z a-z 0-9 . _ : -")
	}
	return nil
}

// writeOnce runs op in one write, through idempotent: once per key, operation and
// input naming the request. op gets the write's tx and time.
func writeOnce[T any](ctx context.Context, s *Service, p *auth.Principal, key, operation string, input any,
	op func(tx *store.Tx, now time.Time) (T, error)) (T, error) {
	now := s.clock()
	var result T
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) (err error) {
		result, _, err = idempotent(ctx, tx, p, key, operation, input, now, func() (T, error) { return op(tx, now) })
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return result, nil
}

// idempotent runs op inside tx unless key was already used in the project: then, if the
// earlier request was the same operation with the same input, it returns the first
// result again (replayed true) and changes nothing; otherwise it is a conflict.
// An empty key runs op as is.
func idempotent[T any](ctx context.Context, tx *store.Tx, p *auth.Principal, key, operation string, input any, now time.Time, op func() (T, error)) (result T, replayed bool, err error) {
	if key == "" {
		result, err = op()
		return result, false, err
	}
	if err := CheckIdempotencyKey(key); err != nil {
		return result, false, err
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return result, false, internal("fingerprint request", err)
	}
	sum := sha256.Sum256(append([]byte(operation+"\n"), raw...))
	fingerprint := sum[:]

	storedFP, stored, err := tx.IdempotentResult(ctx, p.ProjectID, key)
	switch {
	case err == nil:
		if !bytes.Equal(storedFP, fingerprint) {
			return result, false, errs.Conflicting("Idempotency-Key %q was already used for a different request; use a new key for a new request", key)
		}
		if err := json.Unmarshal(stored, &result); err != nil {
			return result, false, internal("decode stored result", err)
		}
		return result, true, nil
	case !errors.Is(err, store.ErrNotFound):
		return result, false, internal("look up idempotency key", err)
	}

	if result, err = op(); err != nil {
		return result, false, err
	}
	out, err := json.Marshal(result)
	if err != nil {
		return result, false, internal("encode result", err)
	}
	if err := tx.PutIdempotentResult(ctx, p.ProjectID, key, fingerprint, out, now); err != nil {
		return result, false, internal("store idempotency key", err)
	}
	return result, false, nil
}
