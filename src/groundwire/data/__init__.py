"""Data in and out: grounding-eval rows, content-hashed chunks, the request log, the semantic cache, embeddings."""
