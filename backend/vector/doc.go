// Package vector holds the pieces of the knowledge bases that need no database: text
// extraction (txt, md, html, pdf), chunking, the embedders (a built-in feature-hashing
// embedder and a client for OpenAI-compatible /v1/embeddings endpoints), and exact
// vector search (brute-force cosine with a bounded top-k) and reciprocal-rank fusion.
// The service layer owns the rules; the store owns the SQL (and FTS5).
package vector
