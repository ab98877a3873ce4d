"""Skipping data files by their file indexes at scan planning (``file-index.read.enabled``, default true).

A file is *proven empty* for a filter when its index container (embedded in the manifest entry, or the
``*.index`` file listed in ``_EXTRA_FILES``) shows that no row satisfies the conjunction of predicates.

* **Append tables**: every proven-empty file is skipped.
* **Primary-key tables**: a file may only be dropped where no merge could make a dropped row matter. The files of a
  (partition, bucket) are grouped into key-range sections exactly as the reader merges them (files whose key ranges
  overlap). A section of **one file** needs no merge (each key occurs once in it): it is skipped when proven empty --
  this covers every file of a fully compacted bucket (all files at the max level have disjoint key ranges) and the
  read-optimized view. A section of **several files** is skipped only when *every* file in it is proven empty and the
  merge function is merge-free (:attr:`~table_engine.lsm.merge_engines.MergeCapabilities.merge_free`:
  ``deduplicate``, ``first-row``): the merged row of a key is then one of its stored versions, none of which
  matches. With ``partial-update`` or ``aggregation`` a merged row can match although no stored version does, so
  such sections are always read (as they are when the caller gives no capabilities).
* **Deletion-vector tables read raw** (``raw``: ``deletion-vectors.enabled`` without merge-on-read; level 0 is left
  out and nothing is merged): every file stands alone, so every proven-empty file is skipped, as for append tables.
  Deletion vectors only remove rows, so they never make a skip unsafe.

Literals are compared in each file's own schema (columns are matched by field id, so renamed columns keep their
indexes; a column added after the file was written has no index in it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from table_engine.core_options import CoreOptions
from table_engine.errors import CorruptMetadataError
from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.file_index.evaluate import FileIndexEvaluator
from table_engine.format.file_index.format import INDEX_PATH_SUFFIX, FileIndexFile, read_file_index
from table_engine.format.manifest import ManifestEntry
from table_engine.format.schema_file import TableSchema
from table_engine.io.executor import parallel_map
from table_engine.io.file_io import FileIO
from table_engine.lsm.merge_engines import MergeCapabilities
from table_engine.predicate import Predicate
from table_engine.store.paths import file_path_in
from table_engine.types import DataType

__all__ = ["filter_by_file_index", "has_file_index", "index_file_path"]

log = logging.getLogger(__name__)

def has_file_index(f: DataFileMeta) -> bool:
    """Whether a data file has a file index (embedded or a sidecar ``.index`` file)."""
    return f.embedded_file_index is not None or any(e.endswith(INDEX_PATH_SUFFIX) for e in f.extra_files)


def index_file_path(data_file_path: str, f: DataFileMeta) -> str | None:
    """Path of a data file's sidecar index (next to the data file), or None."""
    names = [e for e in f.extra_files if e.endswith(INDEX_PATH_SUFFIX)]
    if not names:
        return None
    if len(names) > 1:
        raise CorruptMetadataError(f"data file {f.file_name} lists more than one index file: {names}")
    return f"{data_file_path.rsplit('/', 1)[0]}/{names[0]}"


class _Prover:
    """Decides per manifest entry whether its index proves that no row matches."""

    def __init__(self, file_io: FileIO, table_path: str, schema: TableSchema, predicates: Sequence[Predicate],
                 schema_loader: Callable[[int], TableSchema] | None, default_partition_name: str) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.schema = schema
        self.predicates = predicates
        self.schema_loader = schema_loader
        self.default_partition_name = default_partition_name
        self._part_types = [f.type for f in schema.partition_fields()]
        self._part_cache: dict[bytes, list[object]] = {}
        self._current_ids = {f.name: f.id for f in schema.fields}

    def _file_schema(self, schema_id: int) -> TableSchema:
        if schema_id == self.schema.id or self.schema_loader is None:
            return self.schema
        return self.schema_loader(schema_id)

    def _container(self, e: ManifestEntry) -> FileIndexFile | None:
        f = e.file
        if f.embedded_file_index is not None:
            return FileIndexFile.parse(f.embedded_file_index, f"embedded index of {f.file_name}")
        part = self._part_cache.get(e.partition)
        if part is None:
            part = list(decode_row(e.partition, self._part_types))
            self._part_cache[e.partition] = part
        data_path = file_path_in(self.table_path, self.schema, part, e.bucket, f, self.default_partition_name)
        path = index_file_path(data_path, f)
        return None if path is None else read_file_index(self.file_io, path)

    def proven_empty(self, e: ManifestEntry) -> bool:
        if not has_file_index(e.file):
            return False
        try:
            container = self._container(e)
            if container is None:
                return False
            file_schema = self._file_schema(e.file.schema_id)
            by_id = {f.id: f for f in file_schema.fields}
            preds: list[Predicate] = []
            types = {}
            for p in self.predicates:
                fid = self._current_ids.get(p.column)
                old = by_id.get(fid) if fid is not None else None
                if old is None:
                    continue
                preds.append(Predicate(old.name, p.op, p.value))
                types[old.name] = old.type
            if not preds:
                return False
            return not FileIndexEvaluator(container, types, e.file.row_count).may_match(preds)
        except CorruptMetadataError as err:
            log.warning("file index of %s ignored: %s", e.file.file_name, err)
            return False


def _sections(files: list[ManifestEntry], key_types: Sequence[DataType]) -> list[list[ManifestEntry]]:
    """Files grouped by overlapping key ranges, as the merge-on-read reader groups them."""
    if len(files) <= 1:
        return [files]
    try:
        ranges = sorted(((tuple(decode_row(e.file.min_key, key_types)),
                          tuple(decode_row(e.file.max_key, key_types)), i) for i, e in enumerate(files)),
                        key=lambda r: r[0])
    except Exception:  # undecodable or incomparable keys: one section
        return [files]
    sections: list[list[ManifestEntry]] = []
    current: list[ManifestEntry] = []
    bound: tuple[object, ...] | None = None
    for lo, hi, i in ranges:
        if current and bound is not None and lo > bound:
            sections.append(current)
            current, bound = [], None
        current.append(files[i])
        bound = hi if bound is None or hi > bound else bound
    if current:
        sections.append(current)
    return sections


def filter_by_file_index(file_io: FileIO, table_path: str, schema: TableSchema, entries: list[ManifestEntry],
                         predicates: Sequence[Predicate],
                         schema_loader: Callable[[int], TableSchema] | None = None, *,
                         raw: bool = False, merge_capabilities: MergeCapabilities | None = None
                         ) -> list[ManifestEntry]:
    """The entries a scan must still read after file-index skipping (see the module docstring for the rules);
    ``raw``: the files are read without merging; ``merge_capabilities``: those of the table's merge function."""
    opts = CoreOptions(schema.options)
    if not predicates or not opts.file_index_read_enabled() or not any(has_file_index(e.file) for e in entries):
        return entries
    prover = _Prover(file_io, table_path, schema, predicates, schema_loader, opts.partition_default_name())
    indexed = [e for e in entries if has_file_index(e.file)]
    sidecars = [e for e in indexed if e.file.embedded_file_index is None]
    if len(sidecars) > 4:
        verdicts = dict(zip((id(e) for e in indexed), parallel_map(prover.proven_empty, indexed, 8), strict=True))
    else:
        verdicts = {id(e): prover.proven_empty(e) for e in indexed}

    def empty(e: ManifestEntry) -> bool:
        return verdicts.get(id(e), False)

    if not schema.primary_keys or raw:
        return [e for e in entries if not empty(e)]
    merge_free = merge_capabilities is not None and merge_capabilities.merge_free
    key_types = [f.type for f in schema.key_fields()]
    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault((e.partition, e.bucket), []).append(e)
    dropped: set[int] = set()
    for files in groups.values():
        for section in _sections(files, key_types):
            if len(section) == 1:
                if empty(section[0]):
                    dropped.add(id(section[0]))
            elif merge_free and all(empty(e) for e in section):
                dropped.update(id(e) for e in section)
    return [e for e in entries if id(e) not in dropped]
