"""The engine: a turn's states and cycles, retries, compaction, Chat and sub-agents."""
