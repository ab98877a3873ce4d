"""The LSM tree of primary-key tables: key-values, levels and sorted runs, merge engines, lookup, changelog
production and compaction."""
