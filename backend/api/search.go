package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/service"
)

// search serves GET /api/search: one search over the caller's project.
func search(svc *service.Service) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		in := service.SearchInput{Query: c.Query("q"), Limit: service.DefaultSearchLimit}
		if v, ok, err := queryInt(c, "limit"); err != nil {
			return err
		} else if ok {
			in.Limit = int(v)
		}
		results, err := svc.Search(c.Request.Context(), principal(c), in)
		if err != nil {
			return err
		}
		if results == nil {
			results = []service.SearchResult{} // [] in JSON, not null
		}
		c.JSON(http.StatusOK, gin.H{"results": results})
		return nil
	}
}
