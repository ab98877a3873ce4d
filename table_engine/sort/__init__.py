"""Sort keys of Paimon's layout maintenance (``org.apache.paimon.sort``): plain column order, z-order and Hilbert
curves over a table's columns, vectorized with Arrow and numpy (docs/layout.md)."""

from table_engine.sort.keys import clustering_strategy, sort_indices, sort_key

__all__ = ["clustering_strategy", "sort_indices", "sort_key"]
