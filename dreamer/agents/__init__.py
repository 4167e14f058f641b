"""How agents reach dreamer: SDK tools, the MCP server, bootstrap, ingest."""
