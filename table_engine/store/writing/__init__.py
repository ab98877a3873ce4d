"""The write path: rows -> row kinds, partitions, buckets (fixed, dynamic, cross-partition) -> level-0 files."""
