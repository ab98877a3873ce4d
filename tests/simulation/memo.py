"""The run's memo of decoded metadata, keyed by the exact bytes decoded: a pure decode of equal bytes is done once.

Why: most of a run's cost is the engine decoding the same few files again and again (every commit, scan, expiry
and checker read decodes the latest snapshot, its manifest lists and manifests: Avro headers and their schema JSON,
zstd blocks; readers decode the same data files). In a run the bytes of a file never change under a path and
generation of the store, and a decode is a function of its input bytes alone, so its result can be shared.

What it does not change: every read still goes through the FileIO (the same scheduling point, the same fault, the
same ``FileNotFoundError`` for a missing file); only what the engine does with the bytes it got is memoized, and
only decodes that succeeded (a corrupt file raises again at every read). The memo holds:

* the records of :func:`~table_engine.format.avro.read_avro` and of the unfiltered
  :func:`~table_engine.format.avro.read_avro_blocks` (each caller gets its own list of the same records);
* the frozen entries built from those records (:meth:`ManifestEntry.from_avro`, :meth:`ManifestFileMeta.from_avro`),
  keyed by the record object, which the memo keeps alive;
* the frozen :class:`~table_engine.format.snapshot.Snapshot` of a snapshot, changelog or tag file's JSON;
* the (immutable) Arrow table of a whole-file Parquet read (:func:`~table_engine.format.data_file.read_parquet`):
  the memo makes the engine's ``open_input`` request itself, then takes the bytes it opened from the raw store (no
  other actor runs in between).

A run's trace and decisions are identical with and without it (``test_simulation.py`` checks that), so a seed
names the same interleaving either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from table_engine.format import avro, data_file, formats, index_manifest, manifest, manifest_list
from table_engine.format.manifest import ManifestEntry
from table_engine.format.manifest_list import ManifestFileMeta
from table_engine.format.snapshot import Snapshot
from table_engine.io.base import FileIO
from tests.simulation.mem_io import MemFileIO
from tests.simulation.sim_io import SimFileIO

Records = list[dict[str, Any]]

_AVRO_USERS = (manifest, manifest_list, index_manifest)
"""Modules that call ``read_avro`` by their own global name."""


class DecodeMemo:
    """Decoded metadata of one run (see the module doc); :meth:`active` installs it for a run."""

    def __init__(self) -> None:
        self._records: dict[bytes, Records] = {}
        self._blocks: dict[tuple[bytes, str], Records | None] = {}
        self._snapshots: dict[str | bytes, Snapshot] = {}
        self._read_avro: Callable[[bytes, str], Records] = avro.read_avro
        self._read_avro_blocks: Callable[..., Records | None] = avro.read_avro_blocks
        self._from_json: Callable[[str | bytes, str], Snapshot] = Snapshot.from_json
        self._built: dict[int, tuple[dict[str, Any], Any]] = {}
        self._entry_from_avro: Callable[[dict[str, Any]], ManifestEntry] = ManifestEntry.from_avro
        self._meta_from_avro: Callable[[dict[str, Any]], ManifestFileMeta] = ManifestFileMeta.from_avro
        self._tables: dict[tuple[bytes, tuple[str, ...] | None], pa.Table] = {}
        self._read_parquet: Callable[..., pa.Table] = data_file.read_parquet

    def read_avro(self, data: bytes, path_for_errors: str) -> Records:
        if type(data) is not bytes:  # noqa: E721 (bytes exactly: hashable, immutable)
            return self._read_avro(data, path_for_errors)
        hit = self._records.get(data)
        if hit is None:
            hit = self._records[data] = self._read_avro(data, path_for_errors)
        return list(hit)

    def read_avro_blocks(self, data: bytes, path_for_errors: str, block_property: str,
                         keep_block: Callable[[bytes], bool] | None,
                         keep_key: Callable[[bytes], bool] | None = None) -> Records | None:
        if keep_block is not None or keep_key is not None or type(data) is not bytes:  # noqa: E721
            # a filtered read's result depends on the filters
            return self._read_avro_blocks(data, path_for_errors, block_property, keep_block, keep_key)
        key = (data, block_property)
        if key in self._blocks:
            hit = self._blocks[key]
        else:
            hit = self._blocks[key] = self._read_avro_blocks(data, path_for_errors, block_property, None, None)
        return None if hit is None else list(hit)

    def snapshot_from_json(self, text: str | bytes, path: str) -> Snapshot:
        hit = self._snapshots.get(text)
        if hit is None:
            hit = self._snapshots[text] = self._from_json(text, path)
        return hit

    def _build(self, record: dict[str, Any], build: Callable[[dict[str, Any]], Any]) -> Any:
        hit = self._built.get(id(record))
        if hit is None or hit[0] is not record:
            hit = self._built[id(record)] = (record, build(record))  # holding the record keeps its id unique
        return hit[1]

    def entry_from_avro(self, record: dict[str, Any]) -> ManifestEntry:
        entry: ManifestEntry = self._build(record, self._entry_from_avro)
        return entry

    def meta_from_avro(self, record: dict[str, Any]) -> ManifestFileMeta:
        meta: ManifestFileMeta = self._build(record, self._meta_from_avro)
        return meta

    def read_parquet(self, file_io: FileIO, path: str, columns: Sequence[str] | None = None) -> pa.Table:
        raw = file_io.inner if isinstance(file_io, SimFileIO) else file_io
        if not isinstance(raw, MemFileIO):
            return self._read_parquet(file_io, path, columns)
        with file_io.open_input(path):  # the engine's request: its scheduling point, fault or FileNotFoundError
            data = raw.read_bytes(path)  # the bytes it opened (no other actor ran in between)
        key = (data, None if columns is None else tuple(columns))
        hit = self._tables.get(key)
        if hit is None:
            hit = self._tables[key] = self._read_parquet(raw, path, columns)
        return hit

    @contextmanager
    def active(self) -> Iterator[None]:
        """The engine's metadata decoders go through this memo inside the block (restored afterwards)."""
        for m in _AVRO_USERS:
            setattr(m, "read_avro", self.read_avro)  # noqa: B010 (the names the format modules call)
        setattr(manifest, "read_avro_blocks", self.read_avro_blocks)  # noqa: B010
        setattr(Snapshot, "from_json", staticmethod(self.snapshot_from_json))  # noqa: B010
        setattr(formats, "read_parquet", self.read_parquet)  # noqa: B010
        setattr(ManifestEntry, "from_avro", staticmethod(self.entry_from_avro))  # noqa: B010
        setattr(ManifestFileMeta, "from_avro", staticmethod(self.meta_from_avro))  # noqa: B010
        try:
            yield
        finally:
            for m in _AVRO_USERS:
                setattr(m, "read_avro", self._read_avro)  # noqa: B010
            setattr(manifest, "read_avro_blocks", self._read_avro_blocks)  # noqa: B010
            setattr(Snapshot, "from_json", staticmethod(self._from_json))  # noqa: B010
            setattr(formats, "read_parquet", self._read_parquet)  # noqa: B010
            setattr(ManifestEntry, "from_avro", staticmethod(self._entry_from_avro))  # noqa: B010
            setattr(ManifestFileMeta, "from_avro", staticmethod(self._meta_from_avro))  # noqa: B010
