"""One agent's memory: the workspace, scratch WAL, MEMORY.md document, hormones, lifecycle."""
