"""vLLM's own server log: events, request ids, the stats line, its clock."""
