"""LSM compaction: picking (pure, from level metadata), record-level expiry and rewriting (I/O injected)."""
