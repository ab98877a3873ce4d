"""Property-based: for any split of the input into commits, with any compactions in between, the changelog stream
(snapshot order) applied to an empty table rebuilds the current table -- for the lookup and full-compaction
producers and every merge engine -- and the input producer's changelog is the input itself."""

from __future__ import annotations

import pathlib
import tempfile
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.table import Table
from tests.budget import examples
from tests.table_engine.store.changelog_support import all_changes, apply_changes, changelogs, table_rows

SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("s", pa.string()), ("n", pa.int64())])

ENGINES: dict[str, dict[str, str]] = {
    "deduplicate": {},
    "deduplicate-sequence-field": {"sequence.field": "n"},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                    "fields.s.aggregate-function": "last_non_null_value"},
    "first-row": {"merge-engine": "first-row"},
}
#: row kinds each engine accepts by default
KINDS = {"deduplicate": ["+I", "+U", "-D"], "deduplicate-sequence-field": ["+I", "+U", "-D"],
         "partial-update": ["+I"], "aggregation": ["+I", "+U"], "first-row": ["+I"]}

row = st.tuples(st.integers(0, 12), st.one_of(st.none(), st.sampled_from(["x", "y", "z"])),
                st.one_of(st.none(), st.integers(-5, 5)), st.integers(0, 3))
step = st.one_of(st.tuples(st.just("write"), st.lists(row, min_size=1, max_size=12)),
                 st.tuples(st.just("compact"), st.booleans()))


def write(t: Table, rows: list[tuple[Any, ...]], kinds: list[str]) -> None:
    data = pa.table({"k": pa.array([r[0] for r in rows], pa.int32()), "s": [r[1] for r in rows],
                     "n": pa.array([r[2] for r in rows], pa.int64())}, schema=SCHEMA)
    t.write(data, row_kinds=[kinds[r[3] % len(kinds)] for r in rows])


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine=st.sampled_from(sorted(ENGINES)), producer=st.sampled_from(["lookup", "full-compaction"]),
       write_only=st.booleans(), dedup=st.booleans(), buckets=st.sampled_from(["1", "2"]),
       dv=st.booleans(), steps=st.lists(step, min_size=1, max_size=7))
def test_changelog_stream_rebuilds_the_table(engine: str, producer: str, write_only: bool, dedup: bool,
                                             buckets: str, dv: bool, steps: list[tuple[str, Any]]) -> None:
    if engine == "first-row" and producer == "full-compaction":
        producer = "lookup"  # first-row supports none / lookup only
    extra = {"deletion-vectors.enabled": "true"} if dv and producer == "lookup" and engine != "first-row" else {}
    with tempfile.TemporaryDirectory() as tmp:
        t = Catalog(str(pathlib.Path(tmp) / "wh")).create_table("db.t", SCHEMA, primary_keys=["k"], options={
            "bucket": buckets, "changelog-producer": producer, "write-only": str(write_only).lower(),
            "changelog-producer.row-deduplicate": str(dedup).lower(), "num-sorted-run.compaction-trigger": "2",
            "num-levels": "4", **ENGINES[engine], **extra})
        for kind, arg in steps:
            if kind == "write":
                write(t, arg, KINDS[engine])
                if producer == "lookup" and not write_only:  # the commit waited for the lookup compaction
                    assert apply_changes(all_changes(t)) == table_rows(t)
            else:
                t.maintenance.compact(full=arg)
        t.maintenance.compact(full=True)  # the last changes reach the changelog at the next (full) compaction
        assert apply_changes(all_changes(t)) == table_rows(t)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits=st.lists(st.lists(row, min_size=1, max_size=15), min_size=1, max_size=4),
       buckets=st.sampled_from(["1", "3"]), buffer=st.sampled_from(["256 mb", "1 kb"]))
def test_input_changelog_equals_the_input(commits: list[list[tuple[Any, ...]]], buckets: str, buffer: str) -> None:
    kinds = ["+I", "-U", "+U", "-D"]
    with tempfile.TemporaryDirectory() as tmp:
        t = Catalog(str(pathlib.Path(tmp) / "wh")).create_table("db.t", SCHEMA, primary_keys=["k"], options={
            "bucket": buckets, "changelog-producer": "input", "write-buffer-size": buffer})
        expected = []
        for rows in commits:
            write(t, rows, kinds + kinds)
            expected.append([(kinds[r[3] % 4], *r[:3]) for r in rows])
        got = list(changelogs(t).values())
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert sorted(g, key=repr) == sorted(e, key=repr)  # the same records
            for k in {r[1] for r in e}:  # each key's records in input order
                assert [r for r in g if r[1] == k] == [r for r in e if r[1] == k]
