"""Planning a one-partition read touches only that partition's metadata: manifests whose partition statistics
exclude it are not read, and in the manifests read only the Avro blocks of that partition are decoded (counts, not
times). The table comes from the scale benchmarks' builder (metadata of files that are never written)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.scale_tables import build_many_files_table
from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.store.reading import scan
from table_engine.store.reading.scan import read_manifest_metas
from table_engine.types import parse_type

PARTITIONS, BUCKETS, FILES = 40, 2, 1600


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_many_files_table(str(tmp_path_factory.mktemp("many")), PARTITIONS, BUCKETS, FILES, commits=8,
                                  options={"manifest.merge-min-count": "3", "manifest.target-file-size": "8kb",
                                           "manifest.full-compaction-threshold-size": "24kb"})


class Counts:
    def __init__(self) -> None:
        self.manifests = 0
        self.files = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    """Counts manifests read by the planner and DataFileMeta records decoded (the real functions still run)."""
    c = Counts()
    read_manifest: Callable[..., Any] = scan.read_manifest  # type: ignore[attr-defined]
    from_avro: Callable[[dict[str, Any]], DataFileMeta] = DataFileMeta.from_avro

    def counting_read(*args: Any) -> Any:
        c.manifests += 1
        return read_manifest(*args)

    def counting_from_avro(r: dict[str, Any]) -> DataFileMeta:
        c.files += 1
        return from_avro(r)

    monkeypatch.setattr(scan, "read_manifest", counting_read)
    monkeypatch.setattr(DataFileMeta, "from_avro", staticmethod(counting_from_avro))
    return c


def test_builder_makes_the_table_asked_for(table: Any) -> None:
    splits = table.plan()
    assert len(splits) == PARTITIONS * BUCKETS
    assert sum(len(s.files) for s in splits) == FILES
    assert {s.partition_values[0] for s in splits} == set(range(PARTITIONS))


def test_one_partition_plan_decodes_only_that_partition(table: Any, counts: Counts) -> None:
    splits = table.plan([("p", "=", 7)])
    assert {s.partition_values for s in splits} == {(7,)}
    assert sum(len(s.files) for s in splits) == FILES // PARTITIONS
    assert counts.files == FILES // PARTITIONS  # no entry of another partition was decoded


def test_one_partition_plan_skips_manifests_by_partition_stats(table: Any, counts: Counts) -> None:
    metas = read_manifest_metas(table.file_io, table.path, table.latest_snapshot())
    types = [parse_type("INT")]
    covering = [m for m in metas
                if decode_row(m.partition_stats.min_values, types)[0] <= 7 <= decode_row(m.partition_stats.max_values,
                                                                                           types)[0]]
    table.plan([("p", "=", 7)])
    assert counts.manifests == len(covering) < len(metas)


def test_full_plan_reads_every_manifest_once(table: Any, counts: Counts) -> None:
    metas = read_manifest_metas(table.file_io, table.path, table.latest_snapshot())
    table.plan()
    assert counts.manifests == len(metas)
    assert counts.files == FILES
