package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/vector"
)

// Knowledge bases (vector spaces): documents cut into chunks with vectors, searched by
// similarity and keywords. They are their own subsystem, the Knowledge type (this file
// and vector_*.go), which the Service holds and REST /api/vector and GraphQL call
// through Service.Knowledge. Who may use them:
//
//   - REST (/api/vector/...): data tokens only (Service.Authenticate decides); vector:read for
//     reading and search, vector:write for the rest. A platform token is refused there
//     with 403, and a data token is refused everywhere else, /graphql included.
//   - GraphQL: a platform principal holding admin (project administration, like agents
//     and tokens; never an agent), so that the web UI's session can manage and search
//     its project's spaces.
//   - In-process callers (the CLI, the desktop window): the local owner, who holds
//     every scope, vector:read and vector:write included.
//
// Every rule is here (requireVector and the Knowledge methods), below both interfaces.

// Embedder turns texts into vectors (see package vector for the built-in one).
type Embedder = vector.Embedder

// Bounds on knowledge-base input, also stated in the OpenAPI document.
const (
	MaxVectorSpaceNameLen    = 200
	MaxVectorDescriptionLen  = 2000
	MaxVectorQueryLen        = 10_000
	MaxVectorChunkLen        = 20_000
	MaxVectorDocumentChunks  = 50_000
	MaxVectorDimensions      = 4096
	DefaultVectorK           = 5
	MaxVectorK               = 100
	MaxVectorFilterDocuments = 1000
	// VectorEmbedderClient is the embedder of a space whose vectors come from its clients.
	VectorEmbedderClient = "client"
)

// Event types of knowledge bases (they reach callers holding admin).
const (
	EventVectorSpaceCreated    = "vector.space.created"
	EventVectorSpaceUpdated    = "vector.space.updated"
	EventVectorSpaceDeleted    = "vector.space.deleted"
	EventVectorDocumentCreated = "vector.document.created"
	EventVectorDocumentDeleted = "vector.document.deleted"
)

// Knowledge is the knowledge-base subsystem: spaces, their documents, search, and links
// to agents. The Service holds one (Service.Knowledge); it needs only the store, the
// clock and the embedder, and keeps its own cache of decoded vectors (vector_index.go).
type Knowledge struct {
	store    *store.Store
	clock    func() time.Time
	author   func(*auth.Principal) store.Author // Service.author
	embedder Embedder
	indexes  *indexCache
}

// newKnowledge returns the knowledge bases over st; a nil embedder is the built-in one.
func newKnowledge(st *store.Store, clock func() time.Time, author func(*auth.Principal) store.Author, e Embedder) *Knowledge {
	if e == nil {
		e = vector.HashEmbedder{}
	}
	return &Knowledge{store: st, clock: clock, author: author, embedder: e, indexes: newIndexCache()}
}

// Knowledge is the service's knowledge bases, which REST /api/vector and GraphQL call.
func (s *Service) Knowledge() *Knowledge { return s.vector }

// requireVector checks that p may use the knowledge bases with scope (vector:read or
// vector:write): see the rules at the top of this file.
func requireVector(p *auth.Principal, scope string) error {
	if p == nil {
		return errs.Unauth("authentication required")
	}
	if p.Has(scope) {
		return nil
	}
	if p.TokenType == model.TokenData {
		return errs.Forbid("this request needs the %s scope, which this data token does not hold", scope)
	}
	if p.Kind != auth.KindAgent && p.Has(auth.Admin) {
		return nil
	}
	return errs.Forbid("knowledge bases need a data token with the %s scope (or, outside /api/vector, the admin scope)", scope)
}

// CreateVectorSpaceInput is a new space.
type CreateVectorSpaceInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// CreateSpace makes a space in the caller's project.
func (k *Knowledge) CreateSpace(ctx context.Context, p *auth.Principal, in CreateVectorSpaceInput) (*model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, errs.Invalid("name is required")
	}
	name := strings.TrimSpace(*in.Name)
	if err := checkText("name", name, true, MaxVectorSpaceNameLen); err != nil {
		return nil, err
	}
	var desc string
	if in.Description != nil {
		desc = strings.TrimSpace(*in.Description)
		if err := checkText("description", desc, false, MaxVectorDescriptionLen); err != nil {
			return nil, err
		}
	}
	sp := &model.VectorSpace{ProjectID: p.ProjectID, Name: name, Description: desc, AgentIDs: []int64{}, CreatedAt: k.clock()}
	err := k.store.Write(ctx, k.author(p), func(tx *store.Tx) error {
		if err := tx.InsertVectorSpace(ctx, sp); errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("a space named %q already exists in this project", name)
		} else if err != nil {
			return internal("create space", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorSpaceCreated, sp, sp.CreatedAt)
	})
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// Spaces lists the caller's project's spaces, oldest first.
func (k *Knowledge) Spaces(ctx context.Context, p *auth.Principal) ([]model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	sps, err := k.store.Read().VectorSpaces(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list spaces", err)
	}
	return sps, nil
}

// Space loads a space of the caller's project.
func (k *Knowledge) Space(ctx context.Context, p *auth.Principal, id int64) (*model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorRead); err != nil {
		return nil, err
	}
	return k.space(ctx, k.store.Read(), p, id)
}

func (k *Knowledge) space(ctx context.Context, r store.Reader, p *auth.Principal, id int64) (*model.VectorSpace, error) {
	sp, err := r.VectorSpace(ctx, p.ProjectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("space %d not found", id)
	}
	if err != nil {
		return nil, internal("load space", err)
	}
	return sp, nil
}

// DeleteSpace deletes a space with its documents.
func (k *Knowledge) DeleteSpace(ctx context.Context, p *auth.Principal, id int64) error {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return err
	}
	err := k.store.Write(ctx, k.author(p), func(tx *store.Tx) error {
		err := tx.DeleteVectorSpace(ctx, p.ProjectID, id)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("space %d not found", id)
		}
		if err != nil {
			return internal("delete space", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorSpaceDeleted, map[string]int64{"id": id}, k.clock())
	})
	if err == nil {
		k.indexes.forget(id)
	}
	return err
}

// LinkSpace links a space to an agent of the same project, so that the agent's
// environment names it (AGENTDESK_VECTOR_SPACES). Linking twice changes nothing.
func (k *Knowledge) LinkSpace(ctx context.Context, p *auth.Principal, spaceID, agentID int64) (*model.VectorSpace, error) {
	return k.setLink(ctx, p, spaceID, agentID, true)
}

// UnlinkSpace removes a space's link to an agent; a missing link is not an error.
func (k *Knowledge) UnlinkSpace(ctx context.Context, p *auth.Principal, spaceID, agentID int64) (*model.VectorSpace, error) {
	return k.setLink(ctx, p, spaceID, agentID, false)
}

func (k *Knowledge) setLink(ctx context.Context, p *auth.Principal, spaceID, agentID int64, link bool) (*model.VectorSpace, error) {
	if err := requireVector(p, auth.VectorWrite); err != nil {
		return nil, err
	}
	var sp *model.VectorSpace
	err := k.store.Write(ctx, k.author(p), func(tx *store.Tx) error {
		if _, err := k.space(ctx, tx.Reader, p, spaceID); err != nil {
			return err
		}
		if _, err := tx.Agent(ctx, p.ProjectID, agentID); errors.Is(err, store.ErrNotFound) {
			return errs.Missing("agent %d not found", agentID)
		} else if err != nil {
			return internal("load agent", err)
		}
		var err error
		if link {
			err = tx.LinkVectorSpaceAgent(ctx, spaceID, agentID, k.clock())
		} else {
			err = tx.UnlinkVectorSpaceAgent(ctx, spaceID, agentID)
		}
		if err != nil {
			return internal("link space", err)
		}
		if sp, err = k.space(ctx, tx.Reader, p, spaceID); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventVectorSpaceUpdated, sp, k.clock())
	})
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// agentSpaces is the AGENTDESK_VECTOR_SPACES value of an agent: its linked spaces'
// ids, comma-separated ("" when none).
func (k *Knowledge) agentSpaces(ctx context.Context, r store.Reader, agentID int64) (string, error) {
	ids, err := r.AgentVectorSpaces(ctx, agentID)
	if err != nil {
		return "", internal("load linked spaces", err)
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ","), nil
}
