"""The partitions a commit changes, as a catalog is told them (Paimon's ``AddPartitionCommitCallback`` and the
``PartitionEntry`` statistics a catalog-committed snapshot carries).

A metastore catalog keeps its own list of a table's partitions: once a commit returns, it is told the partitions
the commit's snapshots added files to and the ones a partition drop removed. A catalog that commits snapshots
itself (the REST catalog) is sent each snapshot's per-partition deltas. Both are derived from the entries the
commit holds (no manifest is read) and name partitions by their ``{key: value}`` strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from table_engine.format.binary_row import decode_row
from table_engine.format.manifest import FileKind, ManifestEntry
from table_engine.io.paths import partition_value_string
from table_engine.store.partition_spec import partition_specs, select_partitions
from table_engine.store.pins import PartitionDelta
from table_engine.types import DataField

__all__ = ["PartitionKeys", "changed_partitions", "partition_deltas"]


@dataclass(frozen=True)
class PartitionKeys:
    """A table's partition keys as the committer reads them: encoded partitions to ``{key: value}`` strings
    (``partition.default-name`` for null or blank values), and partition specs to the encoded partitions they
    match."""

    fields: Sequence[DataField]
    default_name: str
    table_path: str

    def values(self, partitions: Iterable[bytes]) -> list[dict[str, str]]:
        """The ``{key: value}`` strings of ``partitions``, sorted by their encoding."""
        types = [f.type for f in self.fields]
        out = []
        for p in sorted(partitions):
            values = decode_row(p, types)
            out.append({f.name: partition_value_string(v, f.type, self.default_name)
                        for f, v in zip(self.fields, values, strict=True)})
        return out

    def matching(self, specs: Sequence[Mapping[str, Any]], partitions: Iterable[bytes]) -> set[bytes]:
        """The ``partitions`` that match any of the partition specs (vectorized, typed values compared: a
        ``{"dt": "2024-01-01"}`` matches a DATE column too)."""
        typed = partition_specs(specs, self.fields, self.default_name, self.table_path) or []
        return select_partitions(partitions, typed, self.fields)


def changed_partitions(entries: Sequence[ManifestEntry], drop: bool) -> tuple[set[bytes], set[bytes]]:
    """(added, dropped) partitions of a published snapshot's entries: its ADD entries' partitions are added
    (Paimon's ``AddPartitionCommitCallback.call``); with ``drop`` (a partition drop) its DELETE entries' are
    dropped."""
    added = {e.partition for e in entries if e.kind == FileKind.ADD}
    dropped = {e.partition for e in entries if e.kind == FileKind.DELETE} if drop else set()
    return added, dropped


def partition_deltas(entries: Sequence[ManifestEntry], keys: PartitionKeys) -> list[PartitionDelta]:
    """What the commit's entries change per partition (Paimon's ``PartitionEntry.merge`` of the delta files),
    for a catalog that commits the snapshot (the REST catalog's ``PartitionStatistics``): from the entries the
    commit holds, no manifest is read. One step per file, not per row."""
    sums: dict[bytes, list[int]] = {}
    for e in entries:
        sign = -1 if e.kind == FileKind.DELETE else 1
        acc = sums.setdefault(e.partition, [0, 0, 0, 0, e.total_buckets])
        acc[0] += sign * e.file.row_count
        acc[1] += sign * e.file.file_size
        acc[2] += sign
        acc[3] = max(acc[3], e.file.creation_time_millis or 0)
        acc[4] = e.total_buckets
    parts = sorted(sums)
    specs = keys.values(parts) if keys.fields else [{} for _ in parts]
    return [PartitionDelta(spec, rows, size, files, created, buckets)
            for spec, (rows, size, files, created, buckets) in zip(specs, (sums[p] for p in parts), strict=True)]
