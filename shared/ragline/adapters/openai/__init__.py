"""Any OpenAI-compatible endpoint: chat model and embedder."""
