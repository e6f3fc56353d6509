package graphql

import (
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// The vector domain: knowledge-base spaces, their documents, search, and links to
// agents. Who may use it is the service's rule (service/vector.go); on /graphql that
// means a platform token holding admin (the web UI's), since data tokens are refused
// here (handler.go authenticate) and accepted only by REST /api/vector.

const vectorAccess = " Needs the admin scope (data tokens are for REST /api/vector)."

var vectorSpaceType = gql.NewObject(gql.ObjectConfig{Name: "VectorSpace", Description: "A knowledge base of the project: documents cut into chunks with vectors.", Fields: gql.Fields{
	"id":          &gql.Field{Type: nnInt, Resolve: field(func(s model.VectorSpace) any { return s.ID })},
	"name":        &gql.Field{Type: nnString, Resolve: field(func(s model.VectorSpace) any { return s.Name })},
	"description": &gql.Field{Type: nnString, Resolve: field(func(s model.VectorSpace) any { return s.Description })},
	"embedder": &gql.Field{Type: nnString, Description: "Where the vectors come from: builtin:hash-384, openai:MODEL or client; empty until the first document.",
		Resolve: field(func(s model.VectorSpace) any { return s.Embedder })},
	"dimensions":    &gql.Field{Type: nnInt, Description: "The vectors' length; 0 until the first document.", Resolve: field(func(s model.VectorSpace) any { return s.Dimensions })},
	"documentCount": &gql.Field{Type: nnInt, Resolve: field(func(s model.VectorSpace) any { return s.Documents })},
	"chunkCount":    &gql.Field{Type: nnInt, Resolve: field(func(s model.VectorSpace) any { return s.Chunks })},
	"agentIds": &gql.Field{Type: listOf(gql.Int), Description: "The agents linked to the space; their environment names it in AGENTDESK_VECTOR_SPACES.",
		Resolve: field(func(s model.VectorSpace) any { return s.AgentIDs })},
	"createdAt": timeField("When the space was made", func(s model.VectorSpace) time.Time { return s.CreatedAt }, false),
}})

var vectorDocumentType = gql.NewObject(gql.ObjectConfig{Name: "VectorDocument", Description: "A document of a space, without its text.", Fields: gql.Fields{
	"id":         &gql.Field{Type: nnInt, Resolve: field(func(d model.VectorDocument) any { return d.ID })},
	"spaceId":    &gql.Field{Type: nnInt, Resolve: field(func(d model.VectorDocument) any { return d.SpaceID })},
	"name":       &gql.Field{Type: nnString, Resolve: field(func(d model.VectorDocument) any { return d.Name })},
	"mimeType":   &gql.Field{Type: nnString, Resolve: field(func(d model.VectorDocument) any { return d.MimeType })},
	"size":       &gql.Field{Type: nnInt, Description: "Bytes of text indexed.", Resolve: field(func(d model.VectorDocument) any { return d.Size })},
	"chunkCount": &gql.Field{Type: nnInt, Resolve: field(func(d model.VectorDocument) any { return d.Chunks })},
	"createdAt":  timeField("When the document was added", func(d model.VectorDocument) time.Time { return d.CreatedAt }, false),
}})

var vectorResultType = gql.NewObject(gql.ObjectConfig{Name: "VectorResult", Description: "A chunk found by a search.", Fields: gql.Fields{
	"documentId":   &gql.Field{Type: nnInt, Resolve: field(func(r model.VectorResult) any { return r.DocumentID })},
	"documentName": &gql.Field{Type: nnString, Resolve: field(func(r model.VectorResult) any { return r.DocumentName })},
	"chunkId":      &gql.Field{Type: nnInt, Resolve: field(func(r model.VectorResult) any { return r.ChunkID })},
	"chunkIndex":   &gql.Field{Type: nnInt, Description: "The chunk's position in its document, from 0.", Resolve: field(func(r model.VectorResult) any { return r.ChunkIndex })},
	"chunk":        &gql.Field{Type: nnString, Description: "The chunk's text.", Resolve: field(func(r model.VectorResult) any { return r.Chunk })},
	"score": &gql.Field{Type: gql.NewNonNull(gql.Float), Description: "Reciprocal-rank fusion score (sum of 1/(60 + rank)); higher is better.",
		Resolve: field(func(r model.VectorResult) any { return r.Score })},
	"similarity": &gql.Field{Type: gql.Float, Description: "Cosine similarity to the query's vector, when a vector ranking ran.",
		Resolve: field(func(r model.VectorResult) any {
			if r.Similarity == nil {
				return nil
			}
			return *r.Similarity
		})},
}})

func (b builder) vectorQueries(f gql.Fields) gql.Fields {
	svc := b.svc
	f["vectorSpaces"] = &gql.Field{Type: listOf(vectorSpaceType), Description: "The project's knowledge-base spaces, oldest first." + vectorAccess,
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Knowledge().Spaces(p.Context, pr)
		})}
	f["vectorSpace"] = &gql.Field{Type: gql.NewNonNull(vectorSpaceType), Args: gql.FieldConfigArgument{"id": {Type: nnInt}}, Description: "One space." + vectorAccess,
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Knowledge().Space(p.Context, pr, argInt64(p.Args, "id"))
		})}
	f["vectorDocuments"] = &gql.Field{Type: listOf(vectorDocumentType), Args: gql.FieldConfigArgument{"spaceId": {Type: nnInt}},
		Description: "A space's documents, oldest first." + vectorAccess,
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Knowledge().Documents(p.Context, pr, argInt64(p.Args, "spaceId"))
		})}
	f["vectorSearch"] = &gql.Field{Type: listOf(vectorResultType),
		Description: "The k chunks of a space that best answer the query, best first: cosine similarity fused with BM25 keyword ranking (as POST /api/vector/spaces/{id}/search)." + vectorAccess,
		Args: gql.FieldConfigArgument{
			"spaceId":     {Type: nnInt},
			"query":       {Type: gql.String, Description: "The question, in words."},
			"vector":      {Type: gql.NewList(gql.NewNonNull(gql.Float)), Description: "The query's vector, of the space's dimensions."},
			"k":           {Type: gql.Int, Description: "How many results, 1 to 100 (default 5)."},
			"mode":        {Type: gql.String, Description: "hybrid (default), vector or keyword."},
			"documentIds": {Type: gql.NewList(gql.NewNonNull(gql.Int)), Description: "Only chunks of these documents."},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			in := service.VectorSearchInput{Query: optString(p.Args, "query"), Mode: argString(p.Args, "mode")}
			if k, ok := p.Args["k"].(int); ok {
				in.K = &k
			}
			if raw, ok := p.Args["vector"].([]any); ok {
				in.Vector = make([]float32, 0, len(raw))
				for _, x := range raw {
					v, _ := x.(float64)
					in.Vector = append(in.Vector, float32(v))
				}
			}
			if raw, ok := p.Args["documentIds"].([]any); ok {
				in.Filter = &service.VectorFilterInput{DocumentIDs: make([]int64, 0, len(raw))}
				for _, x := range raw {
					v, _ := x.(int)
					in.Filter.DocumentIDs = append(in.Filter.DocumentIDs, int64(v))
				}
			}
			return svc.Knowledge().Search(p.Context, pr, argInt64(p.Args, "spaceId"), in)
		})}
	return f
}

func (b builder) vectorMutations(f gql.Fields) gql.Fields {
	svc := b.svc
	link := gql.FieldConfigArgument{"spaceId": {Type: nnInt}, "agentId": {Type: nnInt}}
	f["createVectorSpace"] = &gql.Field{Type: gql.NewNonNull(vectorSpaceType), Description: "Creates a space; its name is unique in the project." + vectorAccess,
		Args: gql.FieldConfigArgument{"name": {Type: nnString}, "description": {Type: gql.String}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			name := argString(p.Args, "name")
			return svc.Knowledge().CreateSpace(p.Context, pr, service.CreateVectorSpaceInput{Name: &name, Description: optString(p.Args, "description")})
		})}
	f["deleteVectorSpace"] = &gql.Field{Type: nnBool, Description: "Deletes a space with its documents; true when done." + vectorAccess,
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			if err := svc.Knowledge().DeleteSpace(p.Context, pr, argInt64(p.Args, "id")); err != nil {
				return nil, err
			}
			return true, nil
		})}
	f["addVectorDocument"] = &gql.Field{Type: gql.NewNonNull(vectorDocumentType),
		Description: "Adds a document from its text (Markdown or plain): chunked, embedded and indexed. Files (txt, md, html, pdf) upload through REST." + vectorAccess,
		Args:        gql.FieldConfigArgument{"spaceId": {Type: nnInt}, "name": {Type: nnString}, "text": {Type: nnString}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			name, text := argString(p.Args, "name"), argString(p.Args, "text")
			return svc.Knowledge().AddDocument(p.Context, pr, argInt64(p.Args, "spaceId"), service.AddVectorDocumentInput{Name: &name, Text: &text})
		})}
	f["deleteVectorDocument"] = &gql.Field{Type: nnBool, Description: "Deletes a document of a space; true when done." + vectorAccess,
		Args: gql.FieldConfigArgument{"spaceId": {Type: nnInt}, "id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			if err := svc.Knowledge().DeleteDocument(p.Context, pr, argInt64(p.Args, "spaceId"), argInt64(p.Args, "id")); err != nil {
				return nil, err
			}
			return true, nil
		})}
	f["linkSpaceToAgent"] = &gql.Field{Type: gql.NewNonNull(vectorSpaceType),
		Description: "Links a space to an agent of the project: `agentdesk agent env` then gives the agent AGENTDESK_VECTOR_SPACES. Linking twice changes nothing." + vectorAccess,
		Args:        link,
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Knowledge().LinkSpace(p.Context, pr, argInt64(p.Args, "spaceId"), argInt64(p.Args, "agentId"))
		})}
	f["unlinkSpaceFromAgent"] = &gql.Field{Type: gql.NewNonNull(vectorSpaceType), Description: "Removes a space's link to an agent; a link that is not there is not an error." + vectorAccess,
		Args: link,
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Knowledge().UnlinkSpace(p.Context, pr, argInt64(p.Args, "spaceId"), argInt64(p.Args, "agentId"))
		})}
	return f
}
