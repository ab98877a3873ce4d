"""The file store: scans, reads, writes and commits of snapshots, and the maintenance on them (compaction, expiry,
rollback, tags, consumers, orphan files)."""
