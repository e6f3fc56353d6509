package api

import (
	"fmt"
	"mime"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// vectorHandler serves the knowledge bases under /api/vector, for data tokens only.
type vectorHandler struct{ svc *service.Service }

// vectorRoutes adds the /api/vector endpoints to r.
func vectorRoutes(r *gin.Engine, svc *service.Service) {
	h := vectorHandler{svc}
	g := r.Group("/api/vector", requireDataToken(svc))
	g.POST("/spaces", h.createSpace)
	g.GET("/spaces", h.listSpaces)
	g.GET("/spaces/:spaceId", h.getSpace)
	g.DELETE("/spaces/:spaceId", h.deleteSpace)
	g.POST("/spaces/:spaceId/documents", h.addDocument)
	g.GET("/spaces/:spaceId/documents", h.listDocuments)
	g.DELETE("/spaces/:spaceId/documents/:docId", h.deleteDocument)
	g.POST("/spaces/:spaceId/search", h.search)
}

// requireDataToken authenticates the request by its data token; the service refuses
// platform tokens here with 403.
func requireDataToken(svc *service.Service) gin.HandlerFunc {
	return authenticate(svc, service.WhereVector)
}

func spaceID(c *gin.Context) (int64, error) { return pathID(c, "spaceId", "space id") }

// createSpace serves POST /api/vector/spaces.
func (h vectorHandler) createSpace(c *gin.Context) {
	var in service.CreateVectorSpaceInput
	if err := bindJSON(c, &in, false); err != nil {
		fail(c, err)
		return
	}
	sp, err := h.svc.Knowledge().CreateSpace(c.Request.Context(), principal(c), in)
	if err == nil {
		c.Header("Location", fmt.Sprintf("/api/vector/spaces/%d", sp.ID))
	}
	writeObject(c, http.StatusCreated, sp, err)
}

// listSpaces serves GET /api/vector/spaces.
func (h vectorHandler) listSpaces(c *gin.Context) {
	sps, err := h.svc.Knowledge().Spaces(c.Request.Context(), principal(c))
	writeObject(c, http.StatusOK, sps, err)
}

// getSpace serves GET /api/vector/spaces/{spaceId}.
func (h vectorHandler) getSpace(c *gin.Context) {
	id, err := spaceID(c)
	if err != nil {
		fail(c, err)
		return
	}
	sp, err := h.svc.Knowledge().Space(c.Request.Context(), principal(c), id)
	writeObject(c, http.StatusOK, sp, err)
}

// deleteSpace serves DELETE /api/vector/spaces/{spaceId}.
func (h vectorHandler) deleteSpace(c *gin.Context) {
	id, err := spaceID(c)
	if err != nil {
		fail(c, err)
		return
	}
	if err := h.svc.Knowledge().DeleteSpace(c.Request.Context(), principal(c), id); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// addDocument serves POST /api/vector/spaces/{spaceId}/documents: a JSON body
// ({"name", "text"} or {"name", "chunks"}) or a multipart/form-data body whose part
// "file" is the document (txt, md, html, pdf). Either may be up to 25 MiB.
func (h vectorHandler) addDocument(c *gin.Context) {
	id, err := spaceID(c)
	if err != nil {
		fail(c, err)
		return
	}
	if err := checkUploadSize(c); err != nil {
		fail(c, err)
		return
	}
	var in service.AddVectorDocumentInput
	mt, params, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if mt == "multipart/form-data" {
		if params["boundary"] == "" {
			fail(c, errs.Invalid("a multipart upload needs a boundary in its Content-Type"))
			return
		}
		part, err := filePart(c, params["boundary"])
		if err != nil {
			fail(c, err)
			return
		}
		defer part.Close()
		name := part.FileName()
		in.Name, in.File, in.FileType = &name, uploadReader{part}, part.Header.Get("Content-Type")
	} else {
		body, err := readBody(c, maxUploadBody)
		if err != nil {
			fail(c, err)
			return
		}
		if err := decodeJSON(body, &in, false); err != nil {
			fail(c, err)
			return
		}
	}
	doc, err := h.svc.Knowledge().AddDocument(c.Request.Context(), principal(c), id, in)
	if err == nil { // the document's URL, though only DELETE takes it
		c.Header("Location", fmt.Sprintf("/api/vector/spaces/%d/documents/%d", id, doc.ID))
	}
	writeObject(c, http.StatusCreated, doc, err)
}

// listDocuments serves GET /api/vector/spaces/{spaceId}/documents.
func (h vectorHandler) listDocuments(c *gin.Context) {
	id, err := spaceID(c)
	if err != nil {
		fail(c, err)
		return
	}
	docs, err := h.svc.Knowledge().Documents(c.Request.Context(), principal(c), id)
	writeObject(c, http.StatusOK, docs, err)
}

// deleteDocument serves DELETE /api/vector/spaces/{spaceId}/documents/{docId}.
func (h vectorHandler) deleteDocument(c *gin.Context) {
	id, err := spaceID(c)
	if err != nil {
		fail(c, err)
		return
	}
	docID, err := pathID(c, "docId", "document id")
	if err != nil {
		fail(c, err)
		return
	}
	if err := h.svc.Knowledge().DeleteDocument(c.Request.Context(), principal(c), id, docID); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// search serves POST /api/vector/spaces/{spaceId}/search.
func (h vectorHandler) search(c *gin.Context) {
	id, err := spaceID(c)
	if err != nil {
		fail(c, err)
		return
	}
	var in service.VectorSearchInput
	if err := bindJSON(c, &in, false); err != nil {
		fail(c, err)
		return
	}
	results, err := h.svc.Knowledge().Search(c.Request.Context(), principal(c), id, in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"results": results})
}
