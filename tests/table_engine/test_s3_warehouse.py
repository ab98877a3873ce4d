"""Everything the engine does on a local warehouse, on an S3 warehouse (the session's moto server on 127.0.0.1).

Each scenario runs twice, once on a local warehouse and once on S3, and the two results must be equal (and, where
it is short, equal to an explicit value). Tables are small (moto answers ~150 requests/s): one bucket, few commits.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock, system_millis, use_clock
from table_engine.io.object_store import S3FileIO
from table_engine.system_tables import SYSTEM_TABLES
from table_engine.table import Table

R = TypeVar("R")

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int64())])
PART_SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                         ("v", pa.string())])


@pytest.fixture
def on_both(catalog: Catalog, s3_catalog: Catalog) -> Callable[[Callable[[Catalog], R]], R]:
    """Run ``scenario(catalog)`` on the local and on the S3 warehouse; both results must be equal: returns it."""
    assert isinstance(s3_catalog.file_io, S3FileIO)

    def run(scenario: Callable[[Catalog], R]) -> R:
        local, s3 = scenario(catalog), scenario(s3_catalog)
        assert s3 == local
        return s3

    return run


def batch(items: dict[int, tuple[str | None, int | None]]) -> pa.Table:
    return pa.table({"id": list(items), "v": [v for v, _ in items.values()], "n": [n for _, n in items.values()]},
                    schema=SCHEMA)


def rows(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in t.to_pylist()), key=repr)


def object_counts(t: Table) -> Counter[str]:
    """Files under the table by top directory (data files under their bucket directory)."""
    base = t.path.rstrip("/")
    return Counter(st.path[len(base) + 1:].split("/")[0] for st in t.file_io.walk(base))


# ---- primary-key tables: every merge engine --------------------------------------------------------------------------

ENGINES = {
    "deduplicate": ({}, [(1, None, 10), (2, "B", None), (3, "c", 3)]),
    "partial-update": ({}, [(1, "a", 10), (2, "B", 2), (3, "c", 3)]),
    "aggregation": ({"fields.n.aggregate-function": "sum", "fields.v.aggregate-function": "last_non_null_value"},
                    [(1, "a", 11), (2, "B", 2), (3, "c", 3)]),
    "first-row": ({}, [(1, "a", 1), (2, "b", 2), (3, "c", 3)]),
}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_primary_key_table_with_every_merge_engine(on_both, engine: str) -> None:
    extra, expected = ENGINES[engine]

    def scenario(catalog: Catalog) -> tuple[list[Any], list[Any]]:
        t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "merge-engine": engine, **extra})
        t.write(batch({1: ("a", 1), 2: ("b", 2)}))
        t.write(batch({1: (None, 10), 3: ("c", 3)}))
        t.write(batch({2: ("B", None)}))
        merged = rows(t.read())
        t.maintenance.compact(full=True)
        return merged, rows(t.read())

    merged, compacted = on_both(scenario)
    assert merged == compacted == expected


# ---- append tables and compaction ------------------------------------------------------------------------------------

def test_append_table_minor_and_full_compaction(on_both) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.a", PART_SCHEMA, partition_keys=["dt"],
                                 options={"compaction.min.file-num": "3", "write-only": "true"})
        for i in range(4):
            t.write(pa.table({"dt": ["x", "y"], "id": [i, i + 10], "v": [f"a{i}", f"b{i}"]}, schema=PART_SCHEMA))
        before = len(t.plan()[0].files) + len(t.plan()[1].files)
        minor = t.maintenance.compact()
        after_minor = sum(len(s.files) for s in t.plan())
        full = t.maintenance.compact(full=True)
        return [before, minor is not None, after_minor, full is not None, sum(len(s.files) for s in t.plan()),
                rows(t.read()), t.latest_snapshot().commit_kind]

    before, minor, after_minor, _, files, data, kind = on_both(scenario)
    assert before == 8 and minor and after_minor == 2 and files == 2 and kind == "COMPACT"
    assert len(data) == 8


def test_primary_key_minor_and_full_compaction(on_both) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "write-only": "true",
                                          "num-sorted-run.compaction-trigger": "3"})
        for i in range(4):
            t.write(batch({i: (f"v{i}", i), i + 1: (f"w{i}", i)}))
        levels = sorted(f.level for s in t.plan() for f in s.files)
        t.maintenance.compact()
        minor = sorted(f.level for s in t.plan() for f in s.files)
        t.maintenance.compact(full=True)
        return [levels, minor, sorted(f.level for s in t.plan() for f in s.files), rows(t.read())]

    levels, minor, full, data = on_both(scenario)
    assert levels == [0, 0, 0, 0] and len(minor) < 4 and len(full) == 1 and full[0] > 0
    assert data == [(0, "v0", 0), (1, "v1", 1), (2, "v2", 2), (3, "v3", 3), (4, "w3", 3)]


# ---- changelog producers, deletion vectors, file indexes -------------------------------------------------------------

@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction"])
def test_changelog_producers(on_both, producer: str) -> None:
    def scenario(catalog: Catalog) -> list[tuple[Any, ...]]:
        t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "changelog-producer": producer})
        t.write(batch({1: ("a", 1), 2: ("b", 2)}))
        t.write(batch({2: ("B", 2), 3: ("c", 3)}))
        t.write(batch({1: ("a", 1)}), row_kinds=["-D"])
        if producer == "full-compaction":
            t.maintenance.compact(full=True)
        consumer = t.changelog_consumer(options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
        polled = consumer.poll(max_snapshots=100)
        return sorted((tuple(r.values()) for b in polled.batches() for r in b.to_pylist()), key=repr)

    changes = on_both(scenario)
    if producer == "lookup":
        assert changes == sorted([("+I", 1, "a", 1), ("+I", 2, "b", 2), ("-U", 2, "b", 2), ("+U", 2, "B", 2),
                                  ("+I", 3, "c", 3), ("-D", 1, "a", 1)], key=repr)


def test_deletion_vectors(on_both) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "deletion-vectors.enabled": "true"})
        t.write(batch({i: (f"v{i}", i) for i in range(6)}))
        t.maintenance.compact(full=True)
        t.write(batch({1: ("X", 1), 4: ("Y", 4)}))
        t.write(batch({5: ("Z", 5)}), row_kinds=["-D"])
        t.maintenance.compact()  # the lookup compaction marks the replaced rows in deletion vectors
        indexes = catalog.get_table("db.t$table_indexes").read().column("index_type").to_pylist()
        return [rows(t.read()), indexes]

    data, indexes = on_both(scenario)
    assert data == [(0, "v0", 0), (1, "X", 1), (2, "v2", 2), (3, "v3", 3), (4, "Y", 4)]
    assert indexes == ["DELETION_VECTORS"]


def test_file_indexes_prune_a_filtered_read(on_both) -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("v", pa.int32())])

    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.i", schema, options={
            "file-index.bloom-filter.columns": "name", "file-index.bitmap.columns": "v",
            "compaction.min.file-num": "1000"})
        for k in range(3):
            t.write(pa.table({"id": pa.array(range(k * 100, k * 100 + 20), pa.int64()),
                              "name": [f"n{k}_{i}" for i in range(20)], "v": pa.array([k] * 20, pa.int32())}))
        out: list[Any] = []
        for flt in ([("name", "=", "n1_7")], [("v", "=", 2)], [("name", "=", "absent")]):
            out.append((sum(len(s.files) for s in t.plan(flt)), rows(t.read(filter=flt))))
        return out

    result = on_both(scenario)
    assert [files for files, _ in result] == [1, 1, 0]
    assert result[0][1] == [(107, "n1_7", 1)] and len(result[1][1]) == 20


# ---- snapshots, tags, partitions, consumers, rollback ----------------------------------------------------------------

def test_snapshot_expiry_tags_rollback_and_consumers(on_both) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        out: list[Any] = []
        with use_clock(ManualClock(system_millis())) as clock:
            assert isinstance(clock, ManualClock)
            t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                                     options={"bucket": "1", "write-only": "true"})
            for i in range(1, 7):
                t.write(batch({i: (f"v{i}", i), 1: (f"one{i}", i)}))
                clock.advance(1000)
            t.create_tag("t2", 2)
            t.create_tag("t3", 3, time_retained_ms=500)
            t.create_tag("gone", 4)
            t.delete_tag("gone")
            t.maintenance.reset_consumer("etl", 4)
            out.append(sorted(t.consumers().items()))
            expired = t.expire_snapshots(retain_min=1, retain_max=2)
            out.append((expired.expired_snapshot_ids, t.earliest_snapshot_id()))  # the consumer keeps 4
            t.maintenance.clear_consumers()
            expired = t.expire_snapshots(retain_min=1, retain_max=2)
            out.append((expired.expired_snapshot_ids, t.earliest_snapshot_id(), t.consumers()))
            out.append(rows(t.read(tag="t2")))                               # a tag outlives its snapshot
            clock.advance(1000)
            out.append((t.maintenance.expire_tags(), t.list_tags()))                     # t3 is past its retention
            t.rollback_to(5)
            out.append((t.latest_snapshot_id(), rows(t.read())))
            out.append(t.rollback_to("t2").snapshot_id)
            out.append((t.latest_snapshot_id(), rows(t.read()), t.list_tags()))
            out.append(object_counts(t))
        return out

    out = on_both(scenario)
    assert out[0] == [("etl", 4)]
    assert out[1] == ([1, 2, 3], 4) and out[2] == ([4], 5, {})
    assert out[3] == [(1, "one2", 2), (2, "v2", 2)]
    assert out[4] == (["t3"], ["t2"])
    assert out[5][0] == 5 and out[6] == 2 and out[7][0] == 2


def test_partition_expiry_and_drop(on_both) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.p", PART_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                 options={"bucket": "1"})
        for dt in ("2020-01-01", "2020-01-02", "2099-01-01", "2099-01-02"):
            t.write(pa.table({"dt": [dt, dt], "id": [1, 2], "v": ["a", "b"]}, schema=PART_SCHEMA))
        expired = t.maintenance.expire_partitions(expiration_time="1 d", timestamp_formatter="yyyy-MM-dd")
        dropped = t.maintenance.drop_partitions([{"dt": "2099-01-02"}])
        parts = catalog.get_table("db.p$partitions").read(columns=["partition", "record_count", "file_count"])
        return [expired.partitions, dropped, rows(parts), sorted(set(t.read().column("dt").to_pylist())),
                object_counts(t)]

    expired, dropped, parts, dts, _ = on_both(scenario)
    assert expired == [{"dt": "2020-01-01"}, {"dt": "2020-01-02"}] and dropped is not None
    assert parts == [("dt=2099-01-01", 2, 1)] and dts == ["2099-01-01"]


# ---- system tables, incremental and streaming reads ------------------------------------------------------------------

#: columns that differ between two runs of the same commits (times, UUID file names, sizes of files naming them)
_RUN_SPECIFIC = ("time", "file_name", "file_path", "manifest_list", "size", "commit_user", "create", "dv_ranges",
                 "min_sequence", "max_sequence")


def test_system_tables(on_both) -> None:
    def scenario(catalog: Catalog) -> dict[str, list[Any]]:
        t = catalog.create_table("db.s", PART_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                 options={"bucket": "2", "changelog-producer": "input",
                                          "file-index.bloom-filter.columns": "v"})
        t.write(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": ["x", "y", "z"]}, schema=PART_SCHEMA))
        t.create_tag("first")
        t.write(pa.table({"dt": ["a"], "id": [2], "v": ["Y"]}, schema=PART_SCHEMA))
        t.maintenance.reset_consumer("c", 2)
        out = {}
        for name in (*SYSTEM_TABLES, "audit_log", "binlog"):
            data = catalog.get_table(f"db.s${name}").read()
            keep = [c for c in data.column_names if not any(s in c for s in _RUN_SPECIFIC)]
            out[name] = rows(data.select(keep))
        return out

    tables = on_both(scenario)
    assert [r[0] for r in tables["snapshots"]] == [1, 2] and tables["consumers"] == [("c", 2)]
    assert [r[0] for r in tables["tags"]] == ["first"] and len(tables["files"]) == 3
    assert rows_of(tables["audit_log"]) == [("+I", "a", 1, "x"), ("+I", "a", 2, "Y"), ("+I", "b", 3, "z")]


def rows_of(values: list[Any]) -> list[Any]:
    return sorted(values, key=repr)


def test_incremental_reads_between_snapshots_and_tags(on_both) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
        t.write(batch({1: ("a", 1), 2: ("b", 2), 3: ("c", 3)}))
        t.create_tag("t1")
        t.write(batch({2: ("B", 2), 4: ("d", 4)}))
        t.maintenance.compact(full=True)
        t.write(batch({3: ("c", 3)}), row_kinds=["-D"])
        t.create_tag("t4")
        log = catalog.get_table("db.t$audit_log")
        scan = t.new_stream_scan(options={"scan.mode": "from-snapshot", "scan.snapshot-id": "2"})
        streamed = []
        while (plan := scan.plan()) is not None:
            streamed.append((plan.snapshot_id, plan.kind, plan.row_count))
        return [rows(log.copy({"incremental-between": "1,4"}).read()),
                rows(log.copy({"incremental-between": "t1,t4"}).read()),
                rows(t.copy({"incremental-between": "0,1"}).read()), streamed]

    between, tags, first, streamed = on_both(scenario)
    assert between == tags == [("+I", 2, "B", 2), ("+I", 4, "d", 4), ("-D", 3, "c", 3)]
    assert first == [(1, "a", 1), (2, "b", 2), (3, "c", 3)]
    assert [(sid, kind) for sid, kind, _ in streamed] == [(2, "delta"), (4, "delta")]


# ---- orphan files: more than 1,000 objects ---------------------------------------------------------------------------

@pytest.mark.slow  # over 10 s: make test runs it, make test-fast does not
def test_orphan_cleanup_lists_past_1000_objects(s3_catalog: Catalog) -> None:
    from concurrent.futures import ThreadPoolExecutor

    t = s3_catalog.create_table("db.t", PART_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                options={"bucket": "1"})
    t.write(pa.table({"dt": ["a", "b"], "id": [1, 2], "v": ["x", "y"]}, schema=PART_SCHEMA))
    t.write(pa.table({"dt": ["a"], "id": [1], "v": ["X"]}, schema=PART_SCHEMA))
    live = {st.path for st in t.file_io.walk(t.path)}
    junk = [f"{t.path}/dt=a/bucket-0/data-junk-{i:04d}.parquet" for i in range(1050)]
    junk += [f"{t.path}/manifest/manifest-junk-{i}" for i in range(30)]
    junk += [f"{t.path}/dt=b/bucket-0/data-junk.parquet", f"{t.path}/snapshot/.snapshot-3.tmp"]
    kept = [f"{t.path}/dt=a/unrelated-dir/x", f"{t.path}/schema/schema-junk"]   # outside the candidate directories
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda p: t.file_io.write_bytes(p, b"junk"), junk + kept))
    # S3 sets modification times itself: the engine's clock moves an hour on, the cutoff is half an hour ahead
    now = system_millis()
    with use_clock(ManualClock(now + 3_600_000)):
        assert t.maintenance.remove_orphan_files(older_than_millis=now - 3_600_000).count == 0        # all younger
        found = t.maintenance.remove_orphan_files(older_than_millis=now + 1_800_000, dry_run=True)
        assert sorted(found.paths) == sorted(junk) and found.total_bytes == 4 * len(junk)
        assert t.maintenance.remove_orphan_files(older_than_millis=now + 1_800_000).count == len(junk)
    assert {st.path for st in t.file_io.walk(t.path)} == live | set(kept)
    assert rows(t.read()) == [("a", 1, "X"), ("b", 2, "y")]


# ---- the changelog consumer's output on S3 ---------------------------------------------------------------------------

def _consume(catalog: Catalog, output: str, fmt: str = "parquet", **kw: Any) -> dict[str, Any]:
    from table_engine.ops.commands import ConsumeChangelog
    from table_engine.ops.consume import consume_changelog

    cmd = ConsumeChangelog(warehouse=catalog.warehouse, table="db.t", catalog_options=dict(catalog.options),
                           consumer_id="c", output=output, output_format=fmt, **kw)
    return consume_changelog(cmd, catalog)


def _output(catalog: Catalog, output: str) -> dict[str, list[Any]]:
    """The files below ``output`` (relative names) with their rows."""
    import json

    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from table_engine.io.file_io import file_io_for

    fio = file_io_for(output, catalog.options)
    out: dict[str, list[Any]] = {}
    for st in fio.walk(output):
        name = st.path[len(output) + 1:]
        if name.endswith(".parquet"):
            out[name] = rows(pq.read_table(fio.open_input(st.path)))
        elif name.endswith(".csv"):
            out[name] = rows(pcsv.read_csv(fio.open_input(st.path)))
        elif name.endswith(".json"):
            out[name] = sorted((tuple(json.loads(line).values()) for line in fio.read_text(st.path).splitlines()),
                               key=repr)
        else:
            out[name] = [fio.read_bytes(st.path)]
    return out


@pytest.mark.parametrize("fmt", ["parquet", "json", "csv"])
def test_consume_changelog_writes_its_output_to_s3(on_both, s3_bucket: str, tmp_path, fmt: str) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        output = f"s3://{s3_bucket}/{uuid.uuid4().hex}/out" if isinstance(catalog.file_io, S3FileIO) \
            else str(tmp_path / uuid.uuid4().hex)
        t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
        t.write(batch({1: ("a", 1), 2: ("b", 2)}))
        t.write(batch({2: ("B", 2)}))
        first = _consume(catalog, output, fmt)
        t.write(batch({1: ("a", 1)}), row_kinds=["-D"])
        second = _consume(catalog, output, fmt)
        third = _consume(catalog, output, fmt)                                            # nothing new
        return [(r["from_snapshot"], r["to_snapshot"], r["rows"], r["output"][len(output):])
                for r in (first, second)] + [third["rows"], t.consumers(), _output(catalog, output)]

    first, second, nothing, consumers, files = on_both(scenario)
    assert first == (1, 2, 3, "/snapshots-1-2") and second == (3, 3, 1, "/snapshots-3-3")
    assert nothing == 0 and consumers == {"c": 4}
    assert sorted(files) == ["snapshots-1-2/_SUCCESS", f"snapshots-1-2/part-0.{fmt}",
                             "snapshots-3-3/_SUCCESS", f"snapshots-3-3/part-0.{fmt}"]


def test_consume_changelog_output_on_s3_is_exactly_once_across_crashes(s3_catalog: Catalog, s3_bucket: str,
                                                                        monkeypatch) -> None:
    import table_engine.ops.consume as consume_module

    output = f"s3://{s3_bucket}/{uuid.uuid4().hex}/out"
    t = s3_catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(batch({1: ("a", 1)}))

    def crash(*a: Any) -> None:
        raise OSError("killed")

    # 1. killed after the output was published, before the consumer advanced: the next run moves it on
    with monkeypatch.context() as m:
        m.setattr(consume_module, "advance_consumer", crash)
        with pytest.raises(OSError, match="killed"):
            _consume(s3_catalog, output)
    assert t.consumers() == {} and sorted(_output(s3_catalog, output)) == ["snapshots-1-1/_SUCCESS",
                                                                           "snapshots-1-1/part-0.parquet"]
    # 2. killed half-way through the write: parts without _SUCCESS, deleted and read again by the next run
    t.write(batch({2: ("b", 2)}))
    real_write_part = consume_module.write_part

    def dies_after_the_part(*a: Any) -> None:
        real_write_part(*a)
        raise OSError("killed while writing")

    with monkeypatch.context() as m:
        m.setattr(consume_module, "write_part", dies_after_the_part)
        with pytest.raises(OSError, match="killed while writing"):
            _consume(s3_catalog, output)
    assert t.consumers() == {"c": 2}
    assert sorted(_output(s3_catalog, output))[-1] == "snapshots-2-2/part-0.parquet"   # no _SUCCESS
    t.write(batch({3: ("c", 3)}))
    result = _consume(s3_catalog, output)
    assert (result["from_snapshot"], result["to_snapshot"], result["rows"]) == (2, 3, 2)
    files = _output(s3_catalog, output)
    assert sorted(files) == ["snapshots-1-1/_SUCCESS", "snapshots-1-1/part-0.parquet", "snapshots-2-3/_SUCCESS",
                             "snapshots-2-3/part-0.parquet"]
    assert [r[1] for r in files["snapshots-1-1/part-0.parquet"] + files["snapshots-2-3/part-0.parquet"]] == [1, 2, 3]
    # 3. --from-snapshot re-reads on purpose: the directory is replaced, not doubled
    result = _consume(s3_catalog, output, from_snapshot=2, to_snapshot=3)
    assert result["rows"] == 2 and len(_output(s3_catalog, output)) == 4
    assert t.consumers() == {"c": 4}


def test_publish_copies_a_staged_directory_on_s3_with_success_last(s3_catalog: Catalog, s3_bucket: str) -> None:
    # what the Spark application's consume-changelog publishes: a directory its job committer wrote (s3a://)
    from table_engine.io.file_io import file_io_for
    from table_engine.ops.consume import SUCCESS_FILE, publish

    root = f"s3a://{s3_bucket}/{uuid.uuid4().hex}"
    fio = file_io_for(root, s3_catalog.options)
    staging, final = f"{root}/_tmp-c-snapshots-1-2-x", f"{root}/snapshots-1-2"
    for name, data in (("part-00000.parquet", b"p0"), ("part-00001.parquet", b"p1"), (SUCCESS_FILE, b"")):
        fio.write_bytes(f"{staging}/{name}", data)
    fio.write_bytes(f"{final}/part-00009.parquet", b"old")               # an earlier run's (--from-snapshot)
    publish(staging, final, fio)
    assert {st.path[len(root) + 1:]: fio.read_bytes(st.path) for st in fio.walk(root)} == {
        "snapshots-1-2/part-00000.parquet": b"p0", "snapshots-1-2/part-00001.parquet": b"p1",
        f"snapshots-1-2/{SUCCESS_FILE}": b""}
    with pytest.raises(FileNotFoundError, match=SUCCESS_FILE):
        publish(f"{root}/_tmp-unfinished", final, fio)


# ---- dynamic buckets, schema evolution, time travel, the catalog and the command line --------------------------------

def test_dynamic_buckets_cross_partition_upsert_and_time_travel(on_both) -> None:
    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.x", PART_SCHEMA, primary_keys=["id"], partition_keys=["dt"],
                                 options={"bucket": "-1"})
        t.write(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": ["x", "y", "z"]}, schema=PART_SCHEMA))
        t.write(pa.table({"dt": ["b", "a"], "id": [1, 4], "v": ["X", "w"]}, schema=PART_SCHEMA))   # 1 moves to b
        first = t.snapshot(1)
        return [rows(t.read()), rows(t.read(snapshot_id=1)), rows(t.read(timestamp_millis=first.time_millis))]

    data, at_1, at_time = on_both(scenario)
    assert data == [("a", 2, "y"), ("a", 4, "w"), ("b", 1, "X"), ("b", 3, "z")]
    assert at_1 == at_time == [("a", 1, "x"), ("a", 2, "y"), ("b", 3, "z")]


def test_schema_evolution_and_rewrite_file_index(on_both) -> None:
    from table_engine.schema_change import AddColumn, SetOption

    def scenario(catalog: Catalog) -> list[Any]:
        t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
        t.write(batch({1: ("a", 1), 2: ("b", 2)}))
        t.alter(AddColumn("w", pa.string()), SetOption("file-index.bloom-filter.columns", "v"))
        t = catalog.get_table("db.t")
        t.write(pa.table({"id": [3], "v": ["c"], "n": [3], "w": ["new"]}, schema=t.arrow_schema))
        before = sum(len(s.files) for s in t.plan([("v", "=", "absent")]))
        rewritten = t.maintenance.rewrite_file_index()
        after = sum(len(s.files) for s in t.plan([("v", "=", "absent")]))
        return [rows(t.read()), before, rewritten is not None, after, t.schema.id]

    data, before, rewritten, after, schema_id = on_both(scenario)
    assert data == [(1, "a", 1, None), (2, "b", 2, None), (3, "c", 3, "new")]
    assert before == 1 and rewritten and after == 0 and schema_id == 1


def test_catalog_databases_and_tables_on_s3(s3_catalog: Catalog) -> None:
    s3_catalog.create_database("empty")
    t = s3_catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(batch({1: ("a", 1)}))
    s3_catalog.create_table("db.u", SCHEMA)
    assert s3_catalog.list_databases() == ["db", "empty"] and s3_catalog.list_tables("db") == ["t", "u"]
    assert Catalog(s3_catalog.warehouse.replace("s3://", "s3a://"), s3_catalog.options).get_table("db.t").read(
    ).num_rows == 1
    s3_catalog.drop_table("db.t")
    assert s3_catalog.list_tables("db") == ["u"] and list(t.file_io.walk(t.path)) == []
    s3_catalog.drop_database("db", cascade=True)
    s3_catalog.drop_database("empty")
    assert s3_catalog.list_databases() == [] and list(t.file_io.walk(s3_catalog.warehouse)) == []


def test_the_command_line_on_an_s3_warehouse(s3_catalog: Catalog, capsys) -> None:
    import json

    from table_engine.cli import main

    t = s3_catalog.create_table("db.t", PART_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                options={"bucket": "1"})
    for dt in ("2020-01-01", "2099-01-01"):
        t.write(pa.table({"dt": [dt], "id": [1], "v": ["a"]}, schema=PART_SCHEMA))
    base = ["--warehouse", s3_catalog.warehouse, "--table", "db.t"]
    base += [arg for k, v in s3_catalog.options.items() for arg in ("--catalog-option", f"{k}={v}")]

    def cli(*argv: str) -> dict[str, Any]:
        assert main([argv[0], *base, *argv[1:]]) == 0
        return json.loads([line for line in capsys.readouterr().out.splitlines() if line.startswith("{")][-1])

    assert cli("compact", "--full")["snapshot_id"] == 3
    assert cli("create-tag", "--tag", "c")["snapshot_id"] == 3
    assert cli("expire-partitions", "--expiration-time", "1 d", "--timestamp-formatter", "yyyy-MM-dd")[
        "expired_partitions"] == [{"dt": "2020-01-01"}]
    assert cli("expire-snapshots", "--retain-max", "1", "--retain-min", "1")["expired_snapshots"] == [1, 2, 3]
    assert cli("rollback", "--tag", "c")["snapshot_id"] == 3
    assert cli("delete-tag", "--tag", "c")["deleted_tags"] == ["c"]
    assert cli("remove-orphan-files", "--older-than", "1 h ago")["orphan_files"] == 0
    assert rows(t.read()) == [("2020-01-01", 1, "a"), ("2099-01-01", 1, "a")]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_write_from_a_source_on_s3_reads_it_through_the_catalog_options(s3_catalog: Catalog, s3_bucket: str,
                                                                        capsys, fmt: str) -> None:
    import json

    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from table_engine.cli import main

    source = f"s3a://{s3_bucket}/{uuid.uuid4().hex}/src"
    fio = s3_catalog.file_io
    for i in range(2):
        part = pa.table({"id": pa.array([i * 10, i * 10 + 1], pa.int64()), "v": [f"a{i}", f"b{i}"]})
        with fio.open_output(f"{source}/dt=x/part-{i}.{fmt}") as out:
            pq.write_table(part, out) if fmt == "parquet" else pcsv.write_csv(part, out)
    fio.write_bytes(f"{source}/_SUCCESS", b"")                           # skipped, as pyarrow skips it locally
    argv = ["write", "--warehouse", s3_catalog.warehouse, "--table", "db.t", "--source", source, "--format", fmt,
            "--create-if-missing", "--primary-key", "id", "--option", "bucket=1"]
    argv += [arg for k, v in s3_catalog.options.items() for arg in ("--catalog-option", f"{k}={v}")]
    assert main(argv) == 0
    out = json.loads([line for line in capsys.readouterr().out.splitlines() if line.startswith("{")][-1])
    assert out["rows"] == 4 and out["snapshot_id"] == 1
    assert rows(s3_catalog.get_table("db.t").read()) == [(0, "a0"), (1, "b0"), (10, "a1"), (11, "b1")]
