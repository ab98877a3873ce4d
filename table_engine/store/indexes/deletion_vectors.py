"""Deletion vectors of a table: locating them for reads, and keeping one bucket's vectors up to date in compaction.

* Reads: :func:`deletion_files` maps each (partition, bucket) of a snapshot to ``data file name ->``
  :class:`DeletionFile` (where its vector lies), from the snapshot's index manifest; :class:`VectorCache` loads
  them (each index file read once) and hands out keep-masks.
* Compaction: :class:`BucketDeletionVectors` holds the vectors of one bucket, as committed plus this writer's
  changes; :meth:`BucketDeletionVectors.flush` writes them as one new DV index file of the bucket (as Paimon's
  ``BucketedDvMaintainer.writeDeletionVectorsIndex`` does) and names the index files it replaces.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.deletion_vector import keep_mask, read_dv_index, write_dv_index
from table_engine.format.index_manifest import (
    DELETION_VECTORS_INDEX,
    DeletionVectorMeta,
    IndexFileMeta,
    IndexManifestEntry,
)
from table_engine.io.file_io import FileIO
from table_engine.io.paths import index_dir, index_file_path, new_index_file_name

__all__ = ["BucketDeletionVectors", "DeletionFile", "VectorCache", "deletion_files", "dv_index_files"]




@dataclass(frozen=True)
class DeletionFile:
    """Where the vector of one data file lies: an index file and the block's range in it."""

    index_path: str
    meta: DeletionVectorMeta


def dv_index_files(entries: Iterable[IndexManifestEntry]) -> dict[tuple[bytes, int], list[IndexFileMeta]]:
    """The DV index files of each (partition, bucket)."""
    out: dict[tuple[bytes, int], list[IndexFileMeta]] = {}
    for e in entries:
        if e.index_file.index_type == DELETION_VECTORS_INDEX:
            out.setdefault((e.partition, e.bucket), []).append(e.index_file)
    return out


def deletion_files(table_path: str, entries: Iterable[IndexManifestEntry]
                   ) -> dict[tuple[bytes, int], dict[str, DeletionFile]]:
    """(partition, bucket) -> data file name -> its vector, for every DV index entry."""
    out: dict[tuple[bytes, int], dict[str, DeletionFile]] = {}
    for key, metas in dv_index_files(entries).items():
        files = out.setdefault(key, {})
        for m in metas:
            path = index_file_path(table_path, m)
            for r in m.dv_ranges or ():
                files[r.data_file_name] = DeletionFile(path, r)
    return out


class VectorCache:
    """Loads vectors on demand, reading each index file once (thread-safe)."""

    def __init__(self, file_io: FileIO) -> None:
        self.file_io = file_io
        self._loaded: dict[str, dict[str, BitMap]] = {}
        self._lock = threading.Lock()

    def vector(self, df: DeletionFile) -> BitMap:
        with self._lock:
            hit = self._loaded.get(df.index_path)
        if hit is None or df.meta.data_file_name not in hit:
            got = read_dv_index(self.file_io, df.index_path, [df.meta])
            with self._lock:
                hit = self._loaded.setdefault(df.index_path, {})
                hit.update(got)
        return hit[df.meta.data_file_name]

    def keep_mask(self, df: DeletionFile | None, num_rows: int) -> npt.NDArray[np.bool_] | None:
        """Rows of the data file to keep; None when nothing is deleted."""
        if df is None:
            return None
        bitmap = self.vector(df)
        return keep_mask(bitmap, num_rows, df.meta.data_file_name) if len(bitmap) else None


class BucketDeletionVectors:
    """The vectors of one (partition, bucket) during compaction: the committed ones (loaded on first use) with
    this writer's new deletions, and the committed index files they replace."""

    def __init__(self, file_io: FileIO, table_path: str, committed: Sequence[IndexFileMeta], bitmap64: bool = False,
                 track: Callable[[str], None] | None = None) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.bitmap64 = bitmap64
        self.track = track
        self._base = list(committed)
        self._vectors: dict[str, BitMap] | None = None
        self._changed = False

    @property
    def vectors(self) -> dict[str, BitMap]:
        if self._vectors is None:
            loaded: dict[str, BitMap] = {}
            for m in self._base:
                if m.dv_ranges:
                    loaded.update(read_dv_index(self.file_io, index_file_path(self.table_path, m), m.dv_ranges))
            self._vectors = loaded
        return self._vectors

    @property
    def changed(self) -> bool:
        return self._changed

    def keep_mask(self, f: DataFileMeta, num_rows: int) -> npt.NDArray[np.bool_] | None:
        """Rows of ``f`` to keep; None when none of them is deleted."""
        if not self._base and not self._changed:
            return None
        bitmap = self.vectors.get(f.file_name)
        return keep_mask(bitmap, num_rows, f.file_name) if bitmap is not None and len(bitmap) else None

    def delete(self, file_name: str, positions: npt.ArrayLike) -> None:
        """Mark rows (0-based positions) of a data file deleted."""
        pos = np.asarray(positions, dtype=np.uint32)
        if not pos.size:
            return
        bitmap = self.vectors.setdefault(file_name, BitMap())
        bitmap.update(pos)
        self._changed = True

    def drop(self, file_names: Iterable[str]) -> None:
        """Forget the vectors of data files that compaction removed."""
        for name in file_names:
            if name in self.vectors:
                del self.vectors[name]
                self._changed = True

    def flush(self) -> tuple[list[IndexFileMeta], list[IndexFileMeta]]:
        """Write the changed vectors as the bucket's new index file: (new index files, replaced index files)."""
        if not self._changed:
            return [], []
        live = {n: b for n, b in self.vectors.items() if len(b)}
        new: list[IndexFileMeta] = []
        if live:
            name = new_index_file_name(1)
            path = f"{index_dir(self.table_path)}/{name}"
            if self.track is not None:
                self.track(path)
            written = write_dv_index(self.file_io, path, live, self.bitmap64)
            new.append(IndexFileMeta(DELETION_VECTORS_INDEX, name, written.file_size, len(written.ranges),
                                     written.ranges))
        replaced, self._base = self._base, new
        self._changed = False
        return new, replaced

