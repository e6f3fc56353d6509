package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// InsertProject stores a new project.
func (t *Tx) InsertProject(ctx context.Context, p *model.Project) error {
	_, err := t.exec(ctx,
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ($1, $2, $3, $4, $5)`,
		p.ID, p.Name, p.Namespace, p.TokenSecret, fmtTime(p.CreatedAt))
	return err
}

// SetProjectSecret replaces a project's agent secret: digests made from the old secret
// stop working once this commits.
func (t *Tx) SetProjectSecret(ctx context.Context, id, secret string) error {
	if err := t.execOne(ctx, `UPDATE projects SET token_secret = $1 WHERE id = $2`, secret, id); err != nil {
		return err
	}
	return nil
}

// Project loads one project.
func (r Reader) Project(ctx context.Context, id string) (*model.Project, error) {
	var p model.Project
	var created string
	err := r.queryRow(ctx,
		`SELECT id, name, namespace, token_secret, created_at FROM projects WHERE id = $1`, id).
		Scan(&p.ID, &p.Name, &p.Namespace, &p.TokenSecret, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p.CreatedAt = parseTime(created)
	return &p, nil
}

// Projects lists every project, oldest first.
func (r Reader) Projects(ctx context.Context) ([]model.Project, error) {
	rows, err := r.query(ctx, `SELECT id, name, namespace, token_secret, created_at FROM projects ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []model.Project
	for rows.Next() {
		var p model.Project
		var created string
		if err := rows.Scan(&p.ID, &p.Name, &p.Namespace, &p.TokenSecret, &created); err != nil {
			return nil, err
		}
		p.CreatedAt = parseTime(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// InsertOwner stores the local owner user if there is none yet.
func (t *Tx) InsertOwner(ctx context.Context, name string, createdAt time.Time) error {
	_, err := t.exec(ctx,
		`INSERT INTO users (name, is_owner, created_at) SELECT $1, 1, $2 WHERE NOT EXISTS (SELECT 1 FROM users WHERE is_owner = 1)`,
		name, fmtTime(createdAt))
	return err
}
