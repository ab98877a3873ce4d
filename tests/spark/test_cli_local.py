"""The ``table-engine`` console script: the application's commands run locally, without Spark."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import build_parser, main, parse_time_millis
from tests.spark.conftest import run_cli


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return code, json.loads(lines[-1])


@pytest.fixture
def source(tmp_path: Path) -> str:
    d = tmp_path / "src"
    d.mkdir()
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64()), "v": [f"v{i}" for i in range(100)],
                             "dt": ["2020-01-01" if i % 2 else "2099-01-01" for i in range(100)]}), d / "a.parquet")
    return str(d)


def test_every_command_locally(capsys, warehouse, source, tmp_path):
    base = ["--warehouse", warehouse, "--table", "db.t"]
    code, out = cli(capsys, "write", *base, "--source", source)
    assert code == 1 and out["status"] == "error" and "--create-if-missing" in out["error"]
    code, out = cli(capsys, "write", *base, "--source", source, "--create-if-missing", "--primary-key", "id,dt",
                    "--partition-key", "dt", "--option", "bucket=2", "--commit-user", "u1")
    assert code == 0 and out["snapshot_id"] == 1 and out["rows"] == 100 and out["created"] is True
    code, out = cli(capsys, "write", *base, "--source", source, "--commit-user", "u1")
    assert out["already_committed"] is True and out["snapshot_id"] == 1
    code, out = cli(capsys, "write", *base, "--source", source, "--mode", "overwrite")
    assert out["snapshot_id"] == 2
    table = Catalog(warehouse).get_table("db.t")
    assert table.latest_snapshot().commit_kind == "OVERWRITE" and table.read().num_rows == 100

    assert cli(capsys, "compact", *base, "--full", "--partition", "dt=2020-01-01")[1]["snapshot_id"] == 3
    assert cli(capsys, "create-tag", *base, "--tag", "t3")[1]["snapshot_id"] == 3
    code, out = cli(capsys, "consume-changelog", *base, "--consumer-id", "c", "--output", str(tmp_path / "out"),
                    "--output-format", "json")
    assert out["rows"] == 100 and out["to_snapshot"] == 3      # OVERWRITE and COMPACT snapshots hold no changes
    assert len(Path(out["output"], "part-0.json").read_text().splitlines()) == 100
    assert table.consumers() == {"c": 4}
    table.write(pa.table({"id": [1000], "v": ["x"], "dt": ["2099-01-01"]}))
    code, out = cli(capsys, "consume-changelog", *base, "--consumer-id", "c", "--output", str(tmp_path / "out"))
    assert (out["from_snapshot"], out["to_snapshot"], out["rows"]) == (4, 4, 1)
    assert cli(capsys, "rollback", *base, "--snapshot", "3")[1]["removed_snapshots"] == [4]
    out = cli(capsys, "expire-partitions", *base, "--expiration-time", "1 d", "--timestamp-formatter",
              "yyyy-MM-dd")[1]
    assert out["expired_partitions"] == [{"dt": "2020-01-01"}] and out["snapshot_id"] == 4
    table.maintenance.reset_consumer("c", None)
    out = cli(capsys, "expire-snapshots", *base, "--retain-max", "1", "--retain-min", "1")[1]
    assert out["expired_snapshots"] == [1, 2, 3] and out["earliest_snapshot_id"] == 4
    assert cli(capsys, "expire-tags", *base, "--older-than", str(int(time.time() * 1000)))[1]["expired_tags"] == ["t3"]
    stray = next(Path(table.path).glob("dt=*/bucket-*")) / "data-stray.parquet"
    stray.write_bytes(b"x")
    os.utime(stray, (time.time() - 7200,) * 2)
    assert cli(capsys, "remove-orphan-files", *base, "--older-than", "1 h ago")[1]["orphan_files"] >= 1
    assert not stray.exists() and table.read().num_rows == 50


def test_sql_needs_spark_and_arguments_are_checked(capsys, warehouse):
    code, out = cli(capsys, "write", "--warehouse", warehouse, "--table", "db.t", "--sql", "SELECT 1")
    assert code == 1 and "spark-submit" in out["error"]
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["rollback", "--warehouse", warehouse, "--table", "db.t"])
    assert exc.value.code == 2


EMPTY_TABLES = {  # created, nothing written yet: what the maintenance DAGs meet on a fresh lake
    "db.pk": {"primary_keys": ["id", "dt"], "partition_keys": ["dt"],
              "options": {"bucket": "2", "write-only": "true", "changelog-producer": "lookup"}},
    "db.agg": {"primary_keys": ["id", "dt"], "partition_keys": ["dt"],
               "options": {"bucket": "2", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum"}},
    "db.log": {"partition_keys": ["dt"], "options": {"bucket": "-1"}},
}


@pytest.mark.parametrize("name", sorted(EMPTY_TABLES))
def test_maintenance_commands_on_a_table_with_no_snapshot(capsys, warehouse, name):
    schema = pa.schema([("id", pa.int64()), ("n", pa.int64()), ("dt", pa.string())])
    table = Catalog(warehouse).create_table(name, schema, **EMPTY_TABLES[name])
    base = ["--warehouse", warehouse, "--table", name]

    def ok(*argv: str) -> dict[str, Any]:
        code, out = cli(capsys, argv[0], *base, *argv[1:])
        assert code == 0 and out["status"] == "ok", out
        return out

    if table.primary_keys:  # the compaction DAG compacts primary-key tables
        for mode in ([], ["--full"]):
            assert ok("compact", *mode)["snapshot_id"] is None
    out = ok("expire-snapshots", "--retain-min", "10", "--retain-max", "100", "--older-than", "1 d ago")
    assert out["expired_snapshots"] == [] and out["earliest_snapshot_id"] is None
    assert ok("expire-snapshots")["expired_snapshots"] == []
    # no snapshot to tag: nothing tagged, said so (the operator skips on this)
    out = ok("create-tag", "--tag", "daily-2026-11-22", "--time-retained", "7 d")
    assert out["tag"] is None and out["snapshot_id"] is None and out["reason"] == "no snapshot yet"
    assert out["requested_tag"] == "daily-2026-11-22" and table.list_tags() == []
    assert ok("expire-tags")["expired_tags"] == []
    for dry_run in ([], ["--dry-run"]):
        out = ok("expire-partitions", "--expiration-time", "365 d", "--timestamp-formatter", "yyyy-MM-dd",
                 "--timestamp-pattern", "$dt", *dry_run)
        assert out["expired_partitions"] == [] and out["snapshot_id"] is None
    for dry_run in ([], ["--dry-run"]):
        assert ok("remove-orphan-files", "--older-than", "1 d ago", *dry_run)["orphan_files"] == 0
    assert table.latest_snapshot_id() is None and Catalog(warehouse).table_exists(name)


def test_create_tag_user_errors_still_fail(capsys, warehouse):
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    Catalog(warehouse).create_table("db.empty", schema, partition_keys=["dt"])
    code, out = cli(capsys, "create-tag", "--warehouse", warehouse, "--table", "db.missing", "--tag", "t")
    assert code == 1 and out["status"] == "error" and "TableNotExistError" in out["error"]
    # an explicit snapshot that does not exist is an error, on an empty table too
    code, out = cli(capsys, "create-tag", "--warehouse", warehouse, "--table", "db.empty", "--tag", "t",
                    "--snapshot", "1")
    assert code == 1 and out["status"] == "error"


def test_time_arguments():
    assert parse_time_millis("1700000000000") == 1700000000000
    assert parse_time_millis("2024-01-01T00:00:00") == 1704067200000
    assert parse_time_millis("2024-01-01T02:00:00+02:00") == 1704067200000
    assert parse_time_millis("2 h ago", now_millis=10_000_000) == 10_000_000 - 7_200_000


def test_console_script(warehouse, source):
    res = run_cli(["write", "--warehouse", warehouse, "--table", "db.c", "--source", source, "--create-if-missing"])
    assert res.returncode == 0 and res.ok()["rows"] == 100
    res = run_cli(["rollback", "--warehouse", warehouse, "--table", "db.c", "--snapshot", "7"])
    assert res.returncode == 1 and res.result is not None and res.result["status"] == "error"


def test_consume_changelog_into_a_table_is_exactly_once_across_a_stop_before_the_consumer_advanced(capsys,
                                                                                                    warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    catalog = Catalog(warehouse)
    dwd = catalog.create_table("db.dwd", schema, primary_keys=["id"], options={"bucket": "2"})
    dws = catalog.create_table("db.dws", schema)                                  # append: a repeat would show
    dwd.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    base = ["--warehouse", warehouse, "--table", "db.dwd", "--consumer-id", "agg", "--target-table", "db.dws"]
    out = cli(capsys, "consume-changelog", *base)[1]
    assert (out["rows"], out["target_snapshot_id"]) == (3, 1) and dwd.consumers() == {"agg": 2}
    assert dws.latest_snapshot().commit_identifier == 1                          # the last source snapshot applied

    dwd.maintenance.reset_consumer("agg", 1)  # the run stopped after the downstream commit, before advancing
    dwd.write(pa.table({"id": [4], "v": ["d"]}, schema=schema))
    out = cli(capsys, "consume-changelog", *base)[1]
    assert (out["from_snapshot"], out["to_snapshot"], out["rows"]) == (2, 2, 1)   # snapshot 1 is not applied again
    assert sorted(dws.read()["id"].to_pylist()) == [1, 2, 3, 4] and dwd.consumers() == {"agg": 3}
    assert [s.commit_identifier for s in dws.snapshots()] == [1, 2]


def _output_rows(out_dir: Path, fmt: str) -> list[tuple[str, int]]:
    """(rowkind, id) of every change row in the completed ``snapshots-*`` directories under ``out_dir``."""
    import pyarrow.dataset as ds

    dirs = sorted(str(d) for d in out_dir.glob("snapshots-*"))
    if not dirs:
        return []
    data = ds.dataset([ds.dataset(d, format=fmt) for d in dirs])
    rows = data.to_table().select(["rowkind", "id"]).to_pylist()
    return sorted((r["rowkind"], r["id"]) for r in rows)


@pytest.mark.parametrize("fmt", ["parquet", "json", "csv"])
def test_consume_changelog_output_is_exactly_once_across_a_crash_after_the_write(capsys, warehouse, tmp_path,
                                                                               monkeypatch, fmt):
    import table_engine.ops.consume as consume_module

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    table = Catalog(warehouse).create_table("db.t", schema, primary_keys=["id"], options={"bucket": "2"})
    for i in range(3):
        table.write(pa.table({"id": [i], "v": [f"a{i}"]}, schema=schema))               # snapshots 1..3
    out_dir = tmp_path / "out"
    base = ["--warehouse", warehouse, "--table", "db.t", "--consumer-id", "c", "--output", str(out_dir),
            "--output-format", fmt]

    real_advance = consume_module.advance_consumer

    def crash(*a: Any) -> None:
        raise OSError("killed before the consumer advanced")

    monkeypatch.setattr(consume_module, "advance_consumer", crash)
    code, out = cli(capsys, "consume-changelog", *base, "--to-snapshot", "2")
    assert code == 1 and "killed" in out["error"] and table.consumers() == {}
    assert sorted(p.name for p in out_dir.iterdir()) == ["snapshots-1-2"]            # complete, not acknowledged
    assert (out_dir / "snapshots-1-2" / "_SUCCESS").is_file()

    # a chain: the run after recovering snapshots 1-2 writes 3-4, then dies too
    table.write(pa.table({"id": [3], "v": ["a3"]}, schema=schema))                      # snapshot 4
    code, out = cli(capsys, "consume-changelog", *base, "--to-snapshot", "4")
    assert code == 1 and table.consumers() == {"c": 3}          # moved past snapshots-1-2 before reading
    assert sorted(p.name for p in out_dir.iterdir()) == ["snapshots-1-2", "snapshots-3-4"]

    monkeypatch.setattr(consume_module, "advance_consumer", real_advance)
    table.write(pa.table({"id": [4, 6], "v": ["a4", "a6"]}, schema=schema))             # snapshot 5
    table.write(pa.table({"id": [5], "v": ["a5"]}, schema=schema))                      # snapshot 6
    code, out = cli(capsys, "consume-changelog", *base)
    assert code == 0 and (out["from_snapshot"], out["to_snapshot"], out["rows"]) == (5, 6, 3)
    assert table.consumers() == {"c": 7}
    assert sorted(p.name for p in out_dir.iterdir()) == ["snapshots-1-2", "snapshots-3-4", "snapshots-5-6"]
    expected = [("+I", i) for i in range(7)]
    assert _output_rows(out_dir, fmt) == expected                                       # each change once

    code, out = cli(capsys, "consume-changelog", *base)                                 # nothing new
    assert code == 0 and out["rows"] == 0 and "output" not in out and table.consumers() == {"c": 7}
    assert _output_rows(out_dir, fmt) == expected


def test_consume_changelog_output_crash_mid_write_leaves_no_final_directory(capsys, warehouse, tmp_path,
                                                                           monkeypatch):
    import pyarrow.dataset as ds

    import table_engine.ops.consume as consume_module

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    table = Catalog(warehouse).create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    table.write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))              # snapshot 1
    out_dir = tmp_path / "out"
    base = ["--warehouse", warehouse, "--table", "db.t", "--consumer-id", "c", "--output", str(out_dir)]
    real_write_part = consume_module.write_part

    def dies_after_some_files(*a: Any) -> None:
        real_write_part(*a)
        raise OSError("killed while writing")

    monkeypatch.setattr(consume_module, "write_part", dies_after_some_files)
    code, out = cli(capsys, "consume-changelog", *base)
    assert code == 1 and "killed while writing" in out["error"] and table.consumers() == {}
    leftovers = sorted(p.name for p in out_dir.iterdir())
    assert len(leftovers) == 1 and leftovers[0].startswith("_tmp-c-snapshots-1-1-")   # nothing looks complete
    assert list((out_dir / leftovers[0]).glob("*.parquet")) and not (out_dir / leftovers[0] / "_SUCCESS").exists()
    assert ds.dataset(str(out_dir), format="parquet").to_table().num_rows == 0         # readers skip _tmp-*

    monkeypatch.setattr(consume_module, "write_part", real_write_part)
    (out_dir / "_tmp-other-snapshots-1-1-abc").mkdir()                 # another consumer's run: not touched
    (out_dir / "snapshots-1-1").mkdir()                                # a final name without _SUCCESS (a write
    (out_dir / "snapshots-1-1" / "part-0.parquet").write_bytes(b"x")   # that died half-way, e.g. Spark's)
    table.write(pa.table({"id": [3], "v": ["c"]}, schema=schema))                      # snapshot 2
    code, out = cli(capsys, "consume-changelog", *base)
    assert code == 0 and (out["from_snapshot"], out["to_snapshot"], out["rows"]) == (1, 2, 3)
    assert sorted(p.name for p in out_dir.iterdir()) == ["_tmp-other-snapshots-1-1-abc", "snapshots-1-2"]
    assert _output_rows(out_dir, "parquet") == [("+I", 1), ("+I", 2), ("+I", 3)]
    assert table.consumers() == {"c": 3}


def test_consume_changelog_output_from_snapshot_rereads_into_the_same_directory(capsys, warehouse, tmp_path):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    table = Catalog(warehouse).create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    table.write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    out_dir = tmp_path / "out"
    base = ["--warehouse", warehouse, "--table", "db.t", "--consumer-id", "c", "--output", str(out_dir)]
    assert cli(capsys, "consume-changelog", *base)[1]["rows"] == 2
    code, out = cli(capsys, "consume-changelog", *base, "--from-snapshot", "1")    # re-read on purpose
    assert code == 0 and (out["from_snapshot"], out["to_snapshot"], out["rows"]) == (1, 1, 2)
    assert sorted(p.name for p in out_dir.iterdir()) == ["snapshots-1-1"]              # replaced, not doubled
    assert _output_rows(out_dir, "parquet") == [("+I", 1), ("+I", 2)]


def test_compact_idle_time_compacts_only_the_partitions_without_recent_writes(capsys, warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                        ("v", pa.string())])
    table = Catalog(warehouse).create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "1", "write-only": "true"})

    def write(dt: str, ids: range) -> None:
        table.write(pa.table({"id": list(ids), "dt": [dt] * len(ids), "v": [f"{dt}{i}" for i in ids]}, schema=schema))

    def files() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for f in Catalog(warehouse).get_table("db.t$files").read().to_pylist():
            out.setdefault(f["partition"], set()).add(Path(f["file_path"]).name)
        return out

    write("old", range(10))
    write("old", range(5, 15))
    time.sleep(8.0)                                        # "old" gets no new data files from here on
    write("new", range(10))
    write("new", range(5, 15))
    before = files()
    assert {p: len(f) for p, f in before.items()} == {"{old}": 2, "{new}": 2}
    base = ["--warehouse", warehouse, "--table", "db.t", "--full"]

    code, out = cli(capsys, "compact", *base, "--idle-time", "1 h")        # no partition idle for an hour
    assert code == 0 and out["status"] == "ok" and out["snapshot_id"] is None and files() == before

    # "old" idle for >= 8 s, "new" written moments ago (4 s of margin for a loaded machine)
    code, out = cli(capsys, "compact", *base, "--idle-time", "4 s")
    assert code == 0 and out["status"] == "ok"
    assert out["snapshot_id"] == 5 and table.latest_snapshot().commit_kind == "COMPACT"
    assert (out["files_before"], out["files_after"], out["rows"]) == (2, 1, 15)
    after = files()
    assert after["{new}"] == before["{new}"]                                # written recently: untouched
    assert len(after["{old}"]) == 1 and not after["{old}"] & before["{old}"]  # idle: compacted into one file
    assert sorted(table.read().select(["dt", "id"]).to_pylist(), key=lambda r: (r["dt"], r["id"])) == \
        [{"dt": dt, "id": i} for dt in ("new", "old") for i in range(15)]


def test_compact_an_append_table(capsys, warehouse):
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    table = Catalog(warehouse).create_table("db.ods", schema, partition_keys=["dt"],
                                            options={"bucket": "-1", "write-only": "true"})
    for i in range(6):
        table.write(pa.table({"id": [i], "dt": ["a" if i % 2 else "b"]}, schema=schema))
    base = ["--warehouse", warehouse, "--table", "db.ods"]
    code, out = cli(capsys, "compact", *base)  # 3 small files per partition: fewer than compaction.min.file-num
    assert code == 0 and out["status"] == "ok" and out["snapshot_id"] is None
    code, out = cli(capsys, "compact", *base, "--full", "--partition", "dt=a")
    assert code == 0 and out["snapshot_id"] == 7 and table.latest_snapshot().commit_kind == "COMPACT"
    assert (out["files_before"], out["files_after"], out["rows"]) == (3, 1, 3)  # partition a only
    assert sorted(table.read().column("id").to_pylist()) == list(range(6))
