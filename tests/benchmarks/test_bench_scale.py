"""benchmarks/bench_scale.py at toy sizes: each section runs on real tables and yields its figures and goals;
the read counts by kind of file do what the benchmark relies on. No timed assertions."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_scale  # noqa: E402
from scale_support import counts, path_kind  # noqa: E402

from table_engine import Catalog  # noqa: E402
from table_engine.io.counting import CountingFileIO  # noqa: E402
from table_engine.io.file_io import LocalFileIO  # noqa: E402


def test_path_kind() -> None:
    t = "/w/db.db/t"
    assert path_kind(f"{t}/snapshot/snapshot-12") == "snapshot"
    assert path_kind(f"{t}/snapshot/LATEST") == "hint"
    assert path_kind(f"{t}/manifest/manifest-list-abc-0") == "manifest-list"
    assert path_kind(f"{t}/manifest/manifest-abc-0") == "manifest"
    assert path_kind(f"{t}/manifest/index-manifest-abc-0") == "index-manifest"
    assert path_kind(f"{t}/schema/schema-0") == "schema"
    assert path_kind(f"{t}/p=1/bucket-0/data-abc-0.parquet") == "data"


def test_counting_file_io_counts_reads_by_kind(tmp_path: Path) -> None:
    fio = CountingFileIO(LocalFileIO())
    table = Catalog(str(tmp_path), file_io=fio).create_table("db.t", pa.schema([("id", pa.int64())]))
    table.write(pa.table({"id": [1, 2]}))
    fio.reset()
    assert table.read().num_rows == 2
    got = counts(fio)
    assert got["reads"]["snapshot"] >= 1 and got["reads"]["manifest"] >= 1
    assert got["reads"]["data"] == 1
    assert got["metadata_reads"] == sum(v for k, v in got["reads"].items() if k != "data")


@pytest.mark.timeout(600)
def test_sections_at_toy_sizes(tmp_path: Path) -> None:
    history, handle = bench_scale.bench_history(tmp_path, 8, [2, 6], window=2)
    assert [c["snapshots"] for c in history["checkpoints"]] == [2, 6]
    assert all(c["commits"] >= 1 and c["median_metadata_reads"] > 0 for c in history["checkpoints"])
    assert history["final_snapshots"] >= 8
    expiry = bench_scale.bench_expiry(handle, [1, 3])
    assert [p["expired"] for p in expiry["points"]] == [1, 3]
    planning = bench_scale.bench_planning(tmp_path, 2, 2, [8, 16], 1)
    assert [p["planned_files"] for p in planning["points"]] == [8, 16]
    memory = bench_scale.bench_memory(tmp_path, [2_000])
    point = memory["points"][0]
    assert point["read"]["rows"] == 2_000
    assert all(point[op]["peak_rss_bytes"] > 10 * 2**20 for op in ("write", "read", "compact"))
    res = {"history": history, "planning": planning, "memory": memory, "expiry": expiry}
    names = [g["goal"] for g in bench_scale.goals(res)]
    assert names == ["commit_time_flat", "metadata_reads_flat", "one_partition_plan", "full_plan_linear",
                     "read_rss_flat", "write_rss_bounded", "compact_rss_bounded", "expiry_reads_linear_in_k"]
