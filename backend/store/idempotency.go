package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// IdempotentResult returns the stored fingerprint and result of a key, or ErrNotFound.
func (r Reader) IdempotentResult(ctx context.Context, projectID, key string) (fingerprint, result []byte, err error) {
	err = r.queryRow(ctx,
		`SELECT fingerprint, result FROM idempotency_keys WHERE project_id = $1 AND key = $2`, projectID, key).
		Scan(&fingerprint, &result)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	return fingerprint, result, err
}

// PutIdempotentResult records the first result of a key.
func (t *Tx) PutIdempotentResult(ctx context.Context, projectID, key string, fingerprint, result []byte, at time.Time) error {
	_, err := t.exec(ctx,
		`INSERT INTO idempotency_keys (project_id, key, fingerprint, result, created_at) VALUES ($1, $2, $3, $4, $5)`,
		projectID, key, fingerprint, result, fmtTime(at))
	return err
}

// PruneIdempotencyKeys forgets keys created before the given time.
func (t *Tx) PruneIdempotencyKeys(ctx context.Context, before time.Time) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, fmtTime(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
