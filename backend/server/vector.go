package server

import (
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/vector"
)

// DefaultEmbedderModel is the model asked of an --embedder-url endpoint when
// --embedder-model is not given (Ollama's usual embedding model).
const DefaultEmbedderModel = "nomic-embed-text"

// Embedder is the knowledge bases' embedder the config asks for: an OpenAI-compatible
// /v1/embeddings endpoint when EmbedderURL is set, else nil (the built-in embedder).
func (c Config) Embedder() service.Embedder {
	if c.EmbedderURL == "" {
		return nil
	}
	model := c.EmbedderModel
	if model == "" {
		model = DefaultEmbedderModel
	}
	return vector.NewOpenAIEmbedder(c.EmbedderURL, model, c.EmbedderAPIKey)
}
