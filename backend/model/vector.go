package model

import "time"

// VectorSpace is a knowledge base of a project: documents cut into chunks with vectors.
type VectorSpace struct {
	ID          int64  `json:"id"`
	ProjectID   string `json:"-"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Embedder is where the space's vectors come from: "builtin:hash-384", "openai:MODEL",
	// or "client" (vectors sent with the chunks); "" until the first document.
	Embedder   string    `json:"embedder"`
	Dimensions int       `json:"dimensions"` // 0 until the first document
	Documents  int64     `json:"documents"`  // how many documents
	Chunks     int64     `json:"chunks"`     // how many chunks, over every document
	AgentIDs   []int64   `json:"agentIds"`   // the agents linked to the space
	CreatedAt  time.Time `json:"createdAt"`
	// Version goes up with every change of what a search of the space finds (documents
	// added or deleted, the embedder set); the server's cache of its vectors checks it.
	Version int64 `json:"-"`
}

// VectorDocument is a document of a space, without its text.
type VectorDocument struct {
	ID        int64     `json:"id"`
	SpaceID   int64     `json:"spaceId"`
	Name      string    `json:"name"`
	MimeType  string    `json:"mimeType"`
	Size      int64     `json:"size"`   // bytes of text indexed
	Chunks    int       `json:"chunks"` // how many chunks it was cut into
	CreatedAt time.Time `json:"createdAt"`
}

// VectorChunk is a chunk of a document, with the name of its document.
type VectorChunk struct {
	ID           int64
	DocumentID   int64
	DocumentName string
	Seq          int
	Text         string
}

// VectorResult is one search result.
type VectorResult struct {
	DocumentID   int64   `json:"documentId"`
	DocumentName string  `json:"documentName"`
	ChunkID      int64   `json:"chunkId"`
	ChunkIndex   int     `json:"chunkIndex"` // position of the chunk in its document, from 0
	Chunk        string  `json:"chunk"`
	Score        float64 `json:"score"` // reciprocal-rank fusion score: higher is better
	// Similarity is the cosine similarity to the query vector, when a vector ranking ran.
	Similarity *float64 `json:"similarity"`
}
