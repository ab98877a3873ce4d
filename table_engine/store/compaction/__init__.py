"""Compaction: primary-key (merge tree, lookup with deletion vectors) and append tables, dedicated or by writers."""
