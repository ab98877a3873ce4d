"""Detection of the capability gate's features (:mod:`table_engine.features`) in the metadata the format layer reads.

Each function maps one piece of metadata to the features it shows (feature name -> a detail naming where), cheaply:
a schema's types and options once per schema, a snapshot's fields once per snapshot, a data file's fields and
extension once per file, an index manifest's entries once per entry. The caller (the table facade) decides with
:func:`table_engine.features.require` whether the operation may go on.
"""

from __future__ import annotations

from collections.abc import Iterable

from table_engine.core_options import REGISTRY
from table_engine.features import DATA_FILE_EXTENSIONS, TYPE_FEATURE_ROOTS, option_features, type_features
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX, HASH_INDEX, IndexManifestEntry
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import Snapshot

__all__ = ["data_file_features", "index_features", "schema_features", "snapshot_features"]

_KNOWN_INDEX_TYPES = frozenset({HASH_INDEX, DELETION_VECTORS_INDEX})


def schema_features(schema: TableSchema) -> dict[str, str]:
    """Features of a schema: column types that are features (BLOB) or that the engine does not know, and the table's
    options (an option outside the option registry and its known-harmless list is the feature "unknown table
    option")."""
    roots: list[str] = []
    for f in schema.fields:
        roots.extend(f.type.unknown_roots())
        roots.extend(r for r in f.type.roots() if r in TYPE_FEATURE_ROOTS)
    found = type_features(roots)
    for name, detail in option_features(schema.options, REGISTRY.is_known).items():
        found.setdefault(name, detail)
    return found


def snapshot_features(snapshot: Snapshot) -> dict[str, str]:
    """Features of a snapshot's JSON fields: ``nextRowId`` (row tracking) and keys the engine does not know."""
    found: dict[str, str] = {}
    if snapshot.next_row_id is not None:
        found["nextRowId"] = f"snapshot {snapshot.id} field 'nextRowId'"
    unknown = sorted(k for k, v in snapshot.extra.items() if v is not None)
    if unknown:
        found["unknown snapshot field"] = f"snapshot {snapshot.id} field '{unknown[0]}'"
    return found


def data_file_features(files: Iterable[DataFileMeta]) -> dict[str, str]:
    """Features of data files: ``_WRITE_COLS`` (data evolution), ``_FIRST_ROW_ID`` (row tracking) and kinds by
    extension other than Parquet, ORC and Avro (``.blob`` files are BLOB columns)."""
    found: dict[str, str] = {}
    for f in files:
        if f.write_cols is not None:
            found.setdefault("_WRITE_COLS", f"data file {f.file_name}")
        if f.first_row_id is not None:
            found.setdefault("_FIRST_ROW_ID", f"data file {f.file_name}")
        ext = f.file_name.rsplit(".", 1)[-1].lower() if "." in f.file_name else ""
        if ext not in DATA_FILE_EXTENSIONS:
            found.setdefault("BLOB" if ext == "blob" else "unknown data-file kind", f"data file {f.file_name}")
    return found


def index_features(entries: Iterable[IndexManifestEntry]) -> dict[str, str]:
    """Features of index-manifest entries: global indexes (``_GLOBAL_INDEX``) and index types the engine does not
    know."""
    found: dict[str, str] = {}
    for e in entries:
        meta = e.index_file
        if meta.global_index is not None:
            found.setdefault("global index", f"{meta.index_type} index file {meta.file_name}")
        elif meta.index_type not in _KNOWN_INDEX_TYPES:
            found.setdefault("unknown index kind", f"{meta.index_type} index file {meta.file_name}")
    return found
