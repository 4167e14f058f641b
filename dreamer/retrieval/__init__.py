"""Finding memories: embedders, the vector index and hybrid search."""
