"""External data paths (``data-file.external-paths``, Paimon 1.1): writes and compactions put new data and changelog
files below the external roots, ``<root>/<partition>/bucket-N/<file>``, and record them in ``_EXTERNAL_PATH``; reads,
expiry and orphan cleanup follow them; bad options are one-line OptionErrors that change nothing."""

from __future__ import annotations

import itertools
import os
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock, system_millis, use_clock
from table_engine.core_enums import ExternalPathStrategy
from table_engine.errors import OptionError
from table_engine.format.data_file_meta import FileSource
from table_engine.format.manifest import FileKind
from table_engine.store import external_paths
from table_engine.store.external_paths import ExternalPathProvider, entropy_dirs
from table_engine.store.lifecycle.file_refs import FileRefs
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table
from tests.table_engine.store.lifecycle.lifecycle_support import referenced_files, rows
from tests.table_engine.test_bad_input import warehouse_state

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
DAY = 86_400


class _AlternatingStarts:
    """Stands in for ``random`` in ``external_paths``: each new provider starts at the next root."""

    def __init__(self) -> None:
        self._next = itertools.count()

    def randrange(self, n: int) -> int:
        return next(self._next) % n


def _ext(tmp_path: Path, *names: str) -> tuple[list[Path], str]:
    roots = [tmp_path / n for n in names]
    return roots, ",".join(f"file://{r}" for r in roots)


def live_paths(t: Table) -> list[str]:
    snap = t.latest_snapshot()
    assert snap is not None
    refs = FileRefs(t.store)
    return [refs.entry_path(e) for e in live_entries(t.file_io, t.path, snap) if e.kind == FileKind.ADD]


def assert_nothing_missing(t: Table) -> None:
    """Every file a snapshot, tag or changelog references exists, in the table or below an external root."""
    missing = sorted(p for p in referenced_files(t) if not t.file_io.exists(p))
    assert not missing, f"referenced files are missing: {missing[:5]}"


def under(path: str, root: Path) -> bool:
    return path.startswith(f"file://{root}/")


def batches(n: int) -> list[pa.Table]:
    out = []
    for i in range(n):
        ids = list(range(i * 3, i * 3 + 6))  # overlaps the previous batch: updates
        out.append(pa.table({"dt": ["a" if x % 2 else "b" for x in ids], "id": ids,
                             "v": [f"v{i}-{x}" for x in ids]}, schema=SCHEMA))
    return out


def model_of(data: list[pa.Table]) -> list[tuple[object, ...]]:
    m: dict[tuple[object, object], tuple[object, ...]] = {}
    for b in data:
        for r in b.to_pylist():
            m[(r["dt"], r["id"])] = (r["dt"], r["id"], r["v"])
    return sorted(m.values())


def age(paths: list[str | Path], seconds: float) -> None:
    stamp = time.time() - seconds
    for p in paths:
        os.utime(str(p).removeprefix("file://"), (stamp, stamp))


def age_tree(root: Path | str, seconds: float) -> None:
    age([os.path.join(d, f) for d, _, fs in os.walk(str(root)) for f in fs], seconds)


@pytest.mark.parametrize("table_options", [
    {"bucket": "2", "changelog-producer": "lookup", "deletion-vectors.enabled": "true"},
    {"bucket": "-1"},
], ids=["pk-dv-lookup", "pk-dynamic"])
def test_pk_writes_compaction_expiry_orphans(catalog: Catalog, tmp_path: Path, table_options: dict[str, str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Each bucket writer starts its round-robin at a random root (as Paimon Java's ExternalPathProvider): with few
    # live files they may all land on one root. Starts that alternate between writers make "both roots" certain.
    monkeypatch.setattr(external_paths, "random", _AlternatingStarts())
    roots, text = _ext(tmp_path, "ext1", "ext2")
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={
        **table_options, "data-file.external-paths": text, "data-file.external-paths.strategy": "round-robin",
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1 ms"})
    data = batches(4)
    for b in data[:3]:
        t.write(b, maintain=False)
    first = live_paths(t)
    assert first and all(under(p, roots[0]) or under(p, roots[1]) for p in first)
    assert {p.split("/")[-3] for p in first} == {"dt=a", "dt=b"} and all(
        p.split("/")[-2].startswith("bucket-") for p in first)
    for root in roots:  # round-robin over both roots
        assert any(under(p, root) for p in first)
    assert not any(n.startswith(("data-", "changelog-")) for _, _, fs in os.walk(t.path) for n in fs)
    assert rows(t.read()) == model_of(data[:3])

    t.maintenance.compact(full=True)
    t.write(data[3], maintain=False)
    compacted = live_paths(t)
    assert all(under(p, roots[0]) or under(p, roots[1]) for p in compacted)
    assert rows(t.read()) == model_of(data)
    files = [p for p in referenced_files(t) if p.rsplit("/", 1)[-1].startswith(("data-", "changelog-"))]
    assert files and all(under(p, roots[0]) or under(p, roots[1]) for p in files)
    if table_options.get("changelog-producer") == "lookup":  # changelog files of compactions go there too
        assert any(p.rsplit("/", 1)[-1].startswith("changelog-") for p in files)

    t.expire_snapshots()
    gone = [p for p in first if p not in compacted]
    assert gone and not any(os.path.exists(p.removeprefix("file://")) for p in gone)
    assert all(os.path.exists(p.removeprefix("file://")) for p in live_paths(t))
    assert_nothing_missing(t)
    assert rows(t.read()) == model_of(data)

    # orphan cleanup: old unreferenced files under the roots go (also below entropy directories); referenced stay
    for root in roots:
        age_tree(root, 2 * DAY)
    age_tree(t.path, 2 * DAY)
    planted = [roots[0] / "dt=a" / "bucket-0" / "data-dead-0.parquet",
               roots[1] / "dt=b" / "bucket-1" / "0101" / "1100" / "0011" / "10100101" / "data-dead-1.parquet"]
    stray = roots[1] / "other" / "data-x-0.parquet"  # not a bucket directory: never touched
    for p in [*planted, stray]:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"orphan")
    age([*planted, stray], 2 * DAY)
    result = t.maintenance.remove_orphan_files()
    assert sorted(result.paths) == sorted(f"file://{p}" for p in planted)
    assert stray.exists() and not any(p.exists() for p in planted)
    assert_nothing_missing(t)
    assert rows(t.read()) == model_of(data)


def test_append_entropy_inject_and_compaction(catalog: Catalog, tmp_path: Path) -> None:
    roots, text = _ext(tmp_path, "e")
    t = catalog.create_table("db.a", SCHEMA, partition_keys=["dt"], options={
        "data-file.external-paths": text, "data-file.external-paths.strategy": "entropy-inject",
        "compaction.min.file-num": "2"})
    data = batches(3)
    for b in data:
        t.write(b, maintain=False)
    paths = live_paths(t)
    for p in paths:
        rel = p[len(f"file://{roots[0]}/"):].split("/")
        assert rel[0].startswith("dt=") and rel[1] == "bucket-0" and "/".join(rel[2:6]) == entropy_dirs(rel[6])
    expected = sorted(tuple(r.values()) for b in data for r in b.to_pylist())
    assert rows(t.read()) == expected
    t.maintenance.compact(full=True)
    snap = t.latest_snapshot()
    live = [e for e in live_entries(t.file_io, t.path, snap) if e.kind == FileKind.ADD]
    assert any(e.file.file_source == FileSource.COMPACT for e in live)  # commit-time or full compaction output
    assert all(e.file.external_path and under(e.file.external_path, roots[0]) for e in live)
    assert rows(t.read()) == expected


def test_entropy_dirs_and_weights() -> None:
    # Guava murmur3_32("data-abc-0.parquet") = 2383874990 (checked against pypaimon's port)
    assert entropy_dirs("data-abc-0.parquet") == "/".join(
        [(b := format(2383874990 | 0x80000000, "032b")[-20:])[0:4], b[4:8], b[8:12], b[12:]])
    p = ExternalPathProvider(["s3://x/a", "s3://x/b"], ExternalPathStrategy.WEIGHTED, [1, 1_000_000])
    picks = [p.path("bucket-0", f"f{i}") for i in range(200)]
    assert sum(x.startswith("s3://x/b/") for x in picks) >= 195
    rr = ExternalPathProvider(["s3://x/a", "s3://x/b"], ExternalPathStrategy.ROUND_ROBIN, None)
    turns = [rr.path("dt=1/bucket-3", "f").rsplit("/", 3)[0] for _ in range(4)]
    assert turns[0] != turns[1] and turns[2:] == turns[:2] and set(turns) == {"s3://x/a", "s3://x/b"}
    assert rr.path("dt=1/bucket-3", "f").endswith("/dt=1/bucket-3/f")


def test_strategy_none_writes_into_the_table(catalog: Catalog, tmp_path: Path) -> None:
    _, text = _ext(tmp_path, "unused")
    t = catalog.create_table("db.n", SCHEMA, primary_keys=["dt", "id"], options={
        "bucket": "1", "data-file.external-paths": text})
    t.write(batches(1)[0])
    assert all(p.startswith(t.path) for p in live_paths(t))
    assert not (tmp_path / "unused").exists()


BAD = [
    ({"data-file.external-paths": "/no/scheme", "data-file.external-paths.strategy": "round-robin"},
     "has no scheme"),
    ({"data-file.external-paths": "file:///x", "data-file.external-paths.strategy": "fastest"},
     "data-file.external-paths.strategy"),
    ({"data-file.external-paths": "file:///x", "data-file.external-paths.strategy": "specific-fs"},
     "specific-fs must be set"),
    ({"data-file.external-paths": "file:///x", "data-file.external-paths.strategy": "specific-fs",
      "data-file.external-paths.specific-fs": "s3"}, "no path left"),
    ({"data-file.external-paths": "file:///x,file:///y", "data-file.external-paths.strategy": "weight-robin",
      "data-file.external-paths.weights": "3,-1"}, "positive integers"),
    ({"data-file.external-paths": "file:///x,file:///y", "data-file.external-paths.strategy": "weight-robin",
      "data-file.external-paths.weights": "1,2,3"}, "3 weights for 2 paths"),
]


@pytest.mark.parametrize(("options", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_options(catalog: Catalog, warehouse: str, options: dict[str, str], message: str) -> None:
    t = catalog.create_table("db.ok", SCHEMA, primary_keys=["dt", "id"], options={"bucket": "1"})
    t.write(batches(1)[0])
    before = warehouse_state(warehouse)
    with pytest.raises(OptionError, match=message) as err:
        catalog.create_table("db.bad", SCHEMA, options=options)
    assert "\n" not in str(err.value)
    with pytest.raises(OptionError, match=message):
        t.copy(options)
    assert warehouse_state(warehouse) == before


def test_root_on_another_filesystem_is_refused_before_writing(catalog: Catalog, warehouse: str) -> None:
    t = catalog.create_table("db.s", SCHEMA, primary_keys=["dt", "id"], options={
        "bucket": "1", "data-file.external-paths": "s3://bucket/ext",
        "data-file.external-paths.strategy": "round-robin"})
    before = warehouse_state(warehouse)
    with pytest.raises(OptionError, match="not on the filesystem of the table"):
        t.write(batches(1)[0])
    assert warehouse_state(warehouse) == before


def test_on_s3_writes_compaction_expiry_orphans(s3_catalog: Catalog, s3_bucket: str) -> None:
    root = f"s3://{s3_bucket}/{uuid.uuid4().hex}/external"
    t = s3_catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={
        "bucket": "2", "deletion-vectors.enabled": "true", "data-file.external-paths": root,
        "data-file.external-paths.strategy": "specific-fs", "data-file.external-paths.specific-fs": "s3",
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1 ms"})
    data = batches(3)
    for b in data:
        t.write(b, maintain=False)
    first = live_paths(t)
    assert all(p.startswith(f"{root}/dt=") for p in first)
    assert not any("/data-" in st.path for st in t.file_io.walk(t.path))
    t.maintenance.compact(full=True)
    t.expire_snapshots()
    live = live_paths(t)
    on_s3 = {st.path for st in t.file_io.walk(root)}
    assert set(live) <= on_s3 and not (set(first) - set(live)) & on_s3  # expired external files are gone
    assert_nothing_missing(t)
    junk = [f"{root}/dt=a/bucket-0/data-junk-0.parquet", f"{root}/dt=b/bucket-1/changelog-junk-0.parquet"]
    kept = f"{root}/elsewhere/data-x.parquet"
    for p in [*junk, kept]:
        t.file_io.write_bytes(p, b"junk")
    now = system_millis()  # S3 sets modification times itself: the cutoff is half an hour ahead
    with use_clock(ManualClock(now + 3_600_000)):
        assert sorted(t.maintenance.remove_orphan_files(older_than_millis=now + 1_800_000).paths) == sorted(junk)
    assert {st.path for st in t.file_io.walk(root)} == set(live) | {kept}
    assert rows(t.read()) == model_of(data)
