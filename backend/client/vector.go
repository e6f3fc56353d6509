package client

import (
	"context"
	"strconv"

	"github.com/agentdesk/agentdesk/backend/model"
)

// VectorSpace and VectorResult are a knowledge base and one search hit, as the API
// returns them.
type (
	VectorSpace  = model.VectorSpace
	VectorResult = model.VectorResult
)

// Spaces lists the project's knowledge bases (a data token with vector:read).
func (c *Client) Spaces(ctx context.Context) ([]VectorSpace, error) {
	var out []VectorSpace
	_, err := c.do(ctx, "GET", "/api/vector/spaces", nil, &out)
	return out, err
}

// Search searches one knowledge base; k 0 means the server's default (5). Best first.
func (c *Client) Search(ctx context.Context, spaceID int64, query string, k int) ([]VectorResult, error) {
	body := map[string]any{"query": query}
	if k > 0 {
		body["k"] = k
	}
	var out struct {
		Results []VectorResult `json:"results"`
	}
	_, err := c.do(ctx, "POST", "/api/vector/spaces/"+strconv.FormatInt(spaceID, 10)+"/search", body, &out)
	return out.Results, err
}
