"""File indexes (data skipping): Paimon's file-index container with bloom-filter, bitmap and BSI indexes.

* :mod:`.format` -- the container (magic, version, header of columns/index types/offsets, body), embedded in the
  manifest or written as ``<data-file>.index``;
* :mod:`.bloom_filter`, :mod:`.bitmap`, :mod:`.bsi` -- the three index types, byte-compatible with Paimon's Java;
* :mod:`.index_options` -- ``file-index.*`` table options and their validation;
* :mod:`.writer` -- building the index of a data file (:func:`with_file_index`, the writer hook);
* :mod:`.evaluate` -- predicates against an index (which rows may match).
"""

from table_engine.format.file_index.bitmap import BITMAP, BitmapIndexReader, build_bitmap
from table_engine.format.file_index.bloom_filter import BLOOM_FILTER, BloomFilter64, BloomFilterReader
from table_engine.format.file_index.bsi import BSI, BsiIndexReader, build_bsi
from table_engine.format.file_index.evaluate import FileIndexEvaluator
from table_engine.format.file_index.format import (
    INDEX_PATH_SUFFIX,
    FileIndexFile,
    read_file_index,
    write_file_index_bytes,
)
from table_engine.format.file_index.index_options import FileIndexOptions, validate_file_index_options
from table_engine.format.file_index.writer import (
    FileIndexResult,
    build_file_index,
    build_index_bytes,
    sidecar_paths,
    with_file_index,
)

__all__ = [
    "BITMAP",
    "BLOOM_FILTER",
    "BSI",
    "INDEX_PATH_SUFFIX",
    "BitmapIndexReader",
    "BloomFilter64",
    "BloomFilterReader",
    "BsiIndexReader",
    "FileIndexEvaluator",
    "FileIndexFile",
    "FileIndexOptions",
    "FileIndexResult",
    "build_bitmap",
    "build_bsi",
    "build_file_index",
    "build_index_bytes",
    "read_file_index",
    "sidecar_paths",
    "validate_file_index_options",
    "with_file_index",
    "write_file_index_bytes",
]
