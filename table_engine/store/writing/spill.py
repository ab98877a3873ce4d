"""The spilled runs of a writer's buffer (``write-buffer-spillable``): sorted, merged key-value runs in local Arrow
IPC files, read back chunk by chunk for the streaming merge into level-0 files.

Files live in a private temporary directory (``paimon-spill-*`` under the system temporary directory, as Java's
``java.io.tmpdir``), created at the first spill and removed by :meth:`SpilledRuns.clear` (after the merge, at abort
and when the writer is closed or collected).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator

import pyarrow as pa
import pyarrow.ipc as ipc

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.merge_engines.function import MergeFunction
from table_engine.lsm.sort import MergeOrder
from table_engine.lsm.streaming_merge import FileRoller, streaming_merge

__all__ = ["SpilledRuns", "merge_spilled"]


class SpilledRuns:
    """Sorted runs (one record per key) spilled to local files, oldest first."""

    def __init__(self, max_runs: int, max_disk_bytes: int | None, chunk_rows: int = 65536) -> None:
        self.max_runs = max(2, max_runs)
        self.max_disk_bytes = max_disk_bytes
        self.chunk_rows = chunk_rows
        self.paths: list[str] = []
        self.disk_bytes = 0
        self._dir: str | None = None
        self._finalizer: weakref.finalize[[str, bool], SpilledRuns] | None = None

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def directory(self) -> str | None:
        return self._dir

    def over_budget(self) -> bool:
        """The spilled files take more than ``write-buffer-spill.max-disk-size``."""
        return self.max_disk_bytes is not None and self.disk_bytes > self.max_disk_bytes

    def spill(self, run: pa.Table, order: MergeOrder, merge_function: MergeFunction) -> None:
        """Spill one sorted, merged run; at ``local-sort.max-num-file-handles`` runs, merge them into one."""
        self._write(iter([run]), run.schema)
        if len(self.paths) >= self.max_runs:
            old = list(self.paths)
            self._write(streaming_merge(self.runs(), order, merge_function), run.schema)
            for p in old:
                self.disk_bytes -= os.path.getsize(p)
                os.remove(p)
            self.paths = self.paths[len(old):]

    def runs(self) -> list[Iterator[pa.Table]]:
        """Each spilled run as chunks, oldest run first."""
        return [self._read(p) for p in self.paths]

    def clear(self) -> None:
        """Remove every spilled file and the directory."""
        self.paths, self.disk_bytes = [], 0
        if self._finalizer is not None:
            self._finalizer()
        self._dir, self._finalizer = None, None

    def _write(self, tables: Iterator[pa.Table], schema: pa.Schema) -> None:
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="paimon-spill-")
            self._finalizer = weakref.finalize(self, shutil.rmtree, self._dir, True)
        path = os.path.join(self._dir, f"run-{len(self.paths)}-{os.urandom(4).hex()}.arrow")
        with pa.OSFile(path, "wb") as sink, ipc.new_file(sink, schema) as writer:
            for t in tables:
                for batch in t.to_batches(max_chunksize=self.chunk_rows):
                    writer.write_batch(batch)
        self.paths.append(path)
        self.disk_bytes += os.path.getsize(path)

    def _read(self, path: str) -> Iterator[pa.Table]:
        with pa.OSFile(path, "rb") as source:
            reader = ipc.open_file(source)
            for i in range(reader.num_record_batches):
                yield pa.Table.from_batches([reader.get_batch(i)])


def merge_spilled(spilled: SpilledRuns, order: MergeOrder, merge_function: MergeFunction | None,
                  group_slices: Callable[[pa.Table], list[tuple[int, int, pa.Table]]],
                  write: Callable[[int, int, pa.Table], list[DataFileMeta]], target_file_size: int) -> None:
    """Merge the spilled runs by streaming (``order`` starts with the writer's bucket group column) and write each
    bucket's merged rows with ``write(group, bucket, rows)``, rolled at ``target_file_size``; the spilled files are
    removed afterwards, also on failure."""
    assert merge_function is not None
    roller: FileRoller[DataFileMeta] | None = None
    current: tuple[int, int] | None = None
    try:
        for piece in streaming_merge(spilled.runs(), order, merge_function):
            for gid, bucket, part in group_slices(piece):
                if (gid, bucket) != current:  # groups come in order: the previous bucket is complete
                    if roller is not None:
                        roller.finish()
                    current = (gid, bucket)
                    roller = FileRoller(functools.partial(write, gid, bucket), target_file_size)
                assert roller is not None
                roller.add(part)
        if roller is not None:
            roller.finish()
    finally:
        spilled.clear()
