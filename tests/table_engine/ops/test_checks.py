"""Data-quality checks (``table_engine.ops.checks``) on real tables: each check passing and failing, bad definitions
(one line naming the check and the column, before any read), the ``check`` command, and a model test of the
duplicate-key and null-fraction checks on random small tables."""

from __future__ import annotations

import datetime
import decimal
import pathlib
import tempfile
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import CheckError, CommandError
from table_engine.ops import CheckTable, from_json
from table_engine.ops.argv import command_argv, parse_command
from table_engine.ops.checks import parse_checks
from table_engine.ops.checks.runner import run_checks
from table_engine.ops.run import run_command
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("status", pa.string()), ("amount", pa.float64()),
                    ("day", pa.date32()), ("price", pa.decimal128(10, 2))])


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``db.orders`` (primary key id, dt; two snapshots, tag ``first`` on the first) and ``db.events`` (append, a
    duplicated id)."""
    w = str(tmp_path_factory.mktemp("checks") / "warehouse")
    c = Catalog(w)
    t = c.create_table("db.orders", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2"})
    d = datetime.date(2026, 11, 20)
    t.write(pa.table({"id": [1, 2, 3], "dt": ["a", "a", "b"], "status": ["new", "paid", None],
                      "amount": [10.0, 20.0, 30.0], "day": [d, d, d],
                      "price": [decimal.Decimal("1.50"), decimal.Decimal("2.00"), decimal.Decimal("3.25")]},
                     schema=SCHEMA))
    t.create_tag("first")
    t.write(pa.table({"id": [4, 1], "dt": ["b", "a"], "status": ["paid", "new"], "amount": [-5.0, 11.0],
                      "day": [d + datetime.timedelta(days=3), d], "price": [None, decimal.Decimal("1.50")]},
                     schema=SCHEMA))
    e = c.create_table("db.events", pa.schema([("id", pa.int64()), ("kind", pa.string()),
                                               ("tags", pa.list_(pa.string()))]))
    e.write(pa.table({"id": [1, 2, 2, 3], "kind": ["a", "b", "b", None], "tags": [["x"], [], None, ["y", "z"]]},
                     schema=e.arrow_schema))
    return w


def run(warehouse: str, table: str, *checks: dict[str, Any]) -> list[tuple[str, bool, Any]]:
    result = run_checks(Catalog(warehouse).get_table(table), parse_checks(list(checks)))
    return [(r.name, r.passed, r.observed) for r in result.results]


# orders, latest: (1,a,new,11.0) (2,a,paid,20.0) (3,b,None,30.0) (4,b,paid,-5.0); 4 rows, 1 null status
@pytest.mark.parametrize(("check", "passed", "observed"), [
    ({"check": "row_count", "min": 4, "max": 4}, True, 4),
    ({"check": "row_count", "min": 5}, False, 4),
    ({"check": "row_count", "max": 3}, False, 4),
    ({"check": "row_count", "max": "1", "where": [["dt", "=", "a"]]}, False, 2),
    ({"check": "no_duplicate_keys"}, True, 0),
    ({"check": "no_duplicate_keys", "columns": ["status"]}, False, 1),
    ({"check": "no_duplicate_keys", "columns": "dt,status", "where": [["dt", "=", "a"]]}, True, 0),
    ({"check": "null_fraction", "column": "status", "max": 0.25}, True, 0.25),
    ({"check": "null_fraction", "column": "status", "max": "0.2"}, False, 0.25),
    ({"check": "null_fraction", "column": "status", "where": [["dt", "=", "a"]]}, True, 0.0),
    ({"check": "null_fraction", "column": "price"}, False, 0.25),
    ({"check": "values_in_set", "column": "status", "values": ["new", "paid"]}, True, 0),
    ({"check": "values_in_set", "column": "status", "values": ["new"]}, False, 2),
    ({"check": "values_in_set", "column": "id", "values": ["1", 2, 3, 4]}, True, 0),
    ({"check": "values_in_range", "column": "amount", "min": 0}, False, 1),
    ({"check": "values_in_range", "column": "amount", "min": -5, "max": 30}, True, 0),
    ({"check": "values_in_range", "column": "day", "max": "2026-11-22"}, False, 1),
    ({"check": "values_in_range", "column": "day", "min": "2026-11-20", "max": "2026-11-23"}, True, 0),
    ({"check": "values_in_range", "column": "price", "min": "1.50", "max": 3}, False, 1),
    ({"check": "rows_added", "since_snapshot": 1, "min": 2, "max": 2}, True, 2),
    ({"check": "rows_added", "since_tag": "first", "min": 3}, False, 2),
    ({"check": "rows_added", "since_snapshot": 2, "max": 0}, True, 0),
    ({"check": "rows_added", "since_snapshot": 1, "min": 1, "where": [["dt", "=", "b"]]}, True, 1),
    ({"check": "predicate", "filter": [["amount", ">=", -5], ["dt", "in", ["a", "b"]]]}, True, 0),
    ({"check": "predicate", "filter": ["amount", ">", 0]}, False, 1),
    ({"check": "predicate", "filter": [["status", "!=", "new"]]}, False, 2),  # a null status does not match
    ({"check": "predicate", "filter": [["day", "<", "2026-11-21"]]}, False, 1),
])
def test_each_check_passes_and_fails(warehouse: str, check: dict[str, Any], passed: bool, observed: Any) -> None:
    [(name, ok, seen)] = run(warehouse, "db.orders", check)
    assert (ok, seen) == (passed, observed), name


def test_duplicates_in_an_append_table_and_the_message(warehouse: str) -> None:
    result = run_checks(Catalog(warehouse).get_table("db.events"), parse_checks([
        {"check": "no_duplicate_keys", "columns": ["id"], "name": "unique ids"},
        {"check": "null_fraction", "column": "kind", "max": 0.5},
        {"check": "values_in_set", "column": "kind", "values": ["a"]}]))
    dup, nulls, kinds = result.results
    assert (dup.name, dup.passed, dup.observed, dup.message) == ("unique ids", False, 1,
                                                                 "1 key held by 2 rows: {id=2}")
    assert (nulls.name, nulls.passed, nulls.observed, nulls.expected) == ("null_fraction(kind)", True, 0.25, "<= 0.5")
    assert (kinds.passed, kinds.message) == (False, "2 of 4 rows with kind not in the set: 'b'")
    assert result.snapshot_id == 1 and not result.passed and [r.name for r in result.failed] == ["unique ids",
                                                                                                "values_in_set(kind)"]


def test_checks_read_one_snapshot(warehouse: str) -> None:
    table = Catalog(warehouse).get_table("db.orders")
    result = run_checks(table, parse_checks([{"check": "row_count", "min": 3, "max": 3}]), snapshot_id=1)
    assert result.snapshot_id == 1 and result.passed


def test_rows_added_since_an_expired_snapshot_is_an_error(tmp_path: pathlib.Path) -> None:
    table = Catalog(str(tmp_path)).create_table("db.e", pa.schema([("id", pa.int64())]))
    for i in range(4):
        table.write(pa.table({"id": [i]}))
    table.expire_snapshots(retain_max=1, retain_min=1)
    with pytest.raises(CheckError, match=r"^check 'rows_added\(since 1\)' \(rows_added\): the specified scan "):
        run_checks(table, parse_checks([{"check": "rows_added", "since_snapshot": 1, "min": 1}]))


def test_an_empty_table_has_no_rows(tmp_path: pathlib.Path) -> None:
    table = Catalog(str(tmp_path)).create_table("db.e", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    result = run_checks(table, parse_checks([{"check": "row_count", "min": 1},
                                             {"check": "null_fraction", "column": "v"},
                                             {"check": "no_duplicate_keys", "columns": ["id"]}]))
    assert result.snapshot_id is None
    assert [(r.passed, r.observed) for r in result.results] == [(False, 0), (True, 0.0), (True, 0)]


# ---- the rows a batch adds (since_snapshot) ---------------------------------------------------------------------
def test_since_snapshot_checks_only_the_rows_added_after_it(warehouse: str) -> None:
    """orders' snapshot 2 adds (4,b,paid,-5.0) and (1,a,new,11.0) on snapshot 1: its bad amount and its 2 rows are
    seen, snapshot 1's null status is not."""
    table = Catalog(warehouse).get_table("db.orders")
    checks = parse_checks([{"check": "row_count", "min": 1}, {"check": "null_fraction", "column": "status"},
                           {"check": "values_in_range", "column": "amount", "min": 0},
                           {"check": "no_duplicate_keys"}])
    batch = run_checks(table, checks, since_snapshot=1)
    assert (batch.snapshot_id, batch.since_snapshot) == (2, 1)
    assert [(r.passed, r.observed) for r in batch.results] == [(True, 2), (True, 0.0), (False, 1), (True, 0)]
    whole = run_checks(table, checks)
    assert [(r.passed, r.observed) for r in whole.results] == [(True, 4), (False, 0.25), (False, 1), (True, 0)]


def test_since_the_checked_snapshot_is_an_empty_batch(warehouse: str) -> None:
    table = Catalog(warehouse).get_table("db.orders")
    result = run_checks(table, parse_checks([{"check": "row_count", "min": 1}]), since_snapshot=2)
    assert [(r.passed, r.observed, r.message) for r in result.results] == [(False, 0, "0 rows")]


def test_since_a_newer_or_expired_snapshot_is_an_error(warehouse: str, tmp_path: pathlib.Path) -> None:
    count = parse_checks([{"check": "row_count", "min": 1}])
    with pytest.raises(CheckError, match=r"^checks of db.orders: since snapshot 3 is newer than the checked "
                                         r"snapshot \(2\)$"):
        run_checks(Catalog(warehouse).get_table("db.orders"), count, since_snapshot=3)
    table = Catalog(str(tmp_path)).create_table("db.e", pa.schema([("id", pa.int64())]))
    for i in range(4):
        table.write(pa.table({"id": [i]}))
    table.expire_snapshots(retain_max=1, retain_min=1)
    with pytest.raises(CheckError, match=r"^checks of db.e: since snapshot 1: "):
        run_checks(table, count, since_snapshot=1)


def test_a_batch_that_overwrote_is_checked_whole(tmp_path: pathlib.Path) -> None:
    """An OVERWRITE replaces rows (an incremental read skips it, as Paimon's does): its batch is the snapshot."""
    table = Catalog(str(tmp_path)).create_table("db.e", pa.schema([("id", pa.int64())]))
    table.write(pa.table({"id": [1, 2]}))
    table.write(pa.table({"id": [7, 8, 9]}), overwrite=True)
    result = run_checks(table, parse_checks([{"check": "row_count", "min": 1}]), since_snapshot=1)
    assert result.since_snapshot is None and result.results[0].observed == 3


# ---- bad definitions ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("checks", "text"), [
    ([{"check": "row_counts", "min": 1}], "check 1 (row_counts): unknown check 'row_counts'; expected one of "),
    ([{"check": "row_count"}], "check 1 (row_count): needs min, max or both"),
    ([{"check": "row_count", "min": 5, "max": 2}], "check 1 (row_count): min 5 is greater than max 2"),
    ([{"check": "row_count", "min": -1}], "check 1 (row_count): min must be an integer >= 0, got -1"),
    ([{"check": "row_count", "min": 1, "minimum": 2}], "check 1 (row_count): unknown field(s) minimum; row_count"),
    ([{"check": "row_count", "min": 1}, {"check": "null_fraction", "name": "n", "column": "v", "max": 1.5}],
     "check 2 (null_fraction 'n' on column 'v'): max must be a fraction between 0 and 1, got 1.5"),
    ([{"check": "null_fraction"}], "check 1 (null_fraction): column is required"),
    ([{"check": "values_in_set", "column": "v", "values": []}],
     "check 1 (values_in_set on column 'v'): values must be a non-empty"),
    ([{"check": "values_in_range", "column": "v"}], "check 1 (values_in_range on column 'v'): needs min, max or both"),
    ([{"check": "rows_added", "min": 1}], "check 1 (rows_added): needs exactly one of since_snapshot and since_tag"),
    ([{"check": "rows_added", "since_snapshot": 0, "min": 1}], "since_snapshot must be a snapshot id >= 1, got 0"),
    ([{"check": "predicate", "filter": "amount > 0"}], "check 1 (predicate): filter must be a list of [column, op"),
    ([{"check": "row_count", "min": 1}, {"check": "row_count", "max": 9}],
     "check 2 (row_count): its name 'row_count' is the name of check 1 too"),
    ([], "checks must be a non-empty list"),
    (["row_count"], "check 1: must be an object like"),
])
def test_bad_definitions_are_one_line_errors(checks: Any, text: str) -> None:
    with pytest.raises(CheckError) as e:
        parse_checks(checks)
    assert text in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)
    with pytest.raises(CommandError, match="^check: --checks "):
        CheckTable(warehouse="w", table="db.t", checks=checks)


@pytest.mark.parametrize(("table", "check", "text"), [
    ("db.orders", {"check": "null_fraction", "column": "stat"},
     "check 'null_fraction(stat)' (null_fraction): unknown column 'stat'; columns are ['id', 'dt'"),
    ("db.orders", {"check": "values_in_set", "column": "id", "values": [1, "x"]},
     "check 'values_in_set(id)' (values_in_set): value 'x' does not fit column 'id' of type int64"),
    ("db.orders", {"check": "values_in_range", "column": "day", "min": "2026-12-01", "max": "2026-01-01"},
     "check 'values_in_range(day)' (values_in_range): min '2026-12-01' is greater than max '2026-01-01' (column "
     "'day' of type date32[day])"),
    ("db.orders", {"check": "values_in_range", "column": "day", "min": "yesterday"},
     "value 'yesterday' does not fit column 'day' of type date32[day]"),
    ("db.events", {"check": "no_duplicate_keys"},
     "check 'no_duplicate_keys' (no_duplicate_keys): table db.events has no primary key: give the key columns"),
    ("db.orders", {"check": "no_duplicate_keys", "columns": ["id", "nope"]}, "unknown column 'nope'"),
    ("db.events", {"check": "no_duplicate_keys", "columns": ["id", "tags"]},
     "check 'no_duplicate_keys(id,tags)' (no_duplicate_keys): column 'tags' of type list<item: string> cannot be "
     "compared as a key"),
    ("db.orders", {"check": "row_count", "min": 1, "where": [["dtt", "=", "a"]]},
     "check 'row_count' (row_count): unknown column 'dtt'"),
    ("db.orders", {"check": "predicate", "filter": [["amount", "~", 1]], "name": "p"},
     "check 'p' (predicate): filter: filter ('amount', '~', 1): operator '~' is not one of"),
    ("db.orders", {"check": "rows_added", "since_snapshot": 7, "min": 1},
     "check 'rows_added(since 7)' (rows_added): snapshot 7 is newer than the checked snapshot of db.orders (2)"),
    ("db.orders", {"check": "rows_added", "since_tag": "nope", "min": 1}, "check 'rows_added(since nope)' "
     "(rows_added): since_tag: "),
])
def test_definitions_that_do_not_fit_the_table_fail_before_any_read(warehouse: str, table: str,
                                                                    check: dict[str, Any], text: str) -> None:
    t = Catalog(warehouse).get_table(table)

    def no_reads(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a bad definition must fail before any data is read")

    t.to_batches = no_reads  # type: ignore[method-assign]
    with pytest.raises(CheckError) as e:
        run_checks(t, parse_checks([{"check": "row_count", "min": 1, "name": "first"}, check]))
    assert text in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)


# ---- the command -------------------------------------------------------------------------------------------------
def test_the_check_command(warehouse: str) -> None:
    checks = ({"check": "row_count", "min": 1}, {"check": "values_in_range", "column": "amount", "min": 0})
    cmd = CheckTable(warehouse=warehouse, table="db.orders", checks=checks)
    assert from_json(cmd.to_json()) == cmd and parse_command(command_argv(cmd)) == cmd
    out = run_command(cmd)
    assert (out["snapshot_id"], out["passed"], out["failed"]) == (2, False, ["values_in_range(amount)"])
    assert out["checks"][1] == {"name": "values_in_range(amount)", "check": "values_in_range", "passed": False,
                                "observed": 1, "expected": "0 values below 0",
                                "message": "1 of 4 rows with amount below 0.0: -5.0"}
    assert run_command(CheckTable(warehouse=warehouse, table="db.orders", checks=checks[:1], snapshot=1))["passed"]
    batch = CheckTable(warehouse=warehouse, table="db.orders", checks=checks, since_snapshot=1)
    assert from_json(batch.to_json()) == batch and parse_command(command_argv(batch)) == batch
    out = run_command(batch)
    assert (out["since_snapshot"], out["passed"], out["checks"][0]["observed"]) == (1, False, 2)


# ---- model test --------------------------------------------------------------------------------------------------
ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.integers(0, 3), st.none() | st.integers(0, 9)),
                max_size=12)


@settings(max_examples=examples(25), deadline=None)
@given(batches=st.lists(ROWS, min_size=1, max_size=2), max_fraction=st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_duplicate_keys_and_null_fraction_match_a_model(batches: list[list[tuple[Any, int, Any]]],
                                                        max_fraction: float) -> None:
    with tempfile.TemporaryDirectory() as w:
        table = Catalog(w).create_table("db.t", pa.schema([("k", pa.string()), ("n", pa.int64()),
                                                           ("v", pa.int64())]))
        for rows in batches:
            table.write(pa.table({"k": [r[0] for r in rows], "n": [r[1] for r in rows], "v": [r[2] for r in rows]},
                                 schema=table.arrow_schema))
        result = run_checks(table, parse_checks([{"check": "no_duplicate_keys", "columns": ["k", "n"]},
                                                 {"check": "null_fraction", "column": "v", "max": max_fraction}]))
    rows = [r for b in batches for r in b]
    duplicated = sum(1 for count in Counter((r[0], r[1]) for r in rows).values() if count > 1)
    fraction = sum(r[2] is None for r in rows) / len(rows) if rows else 0.0
    dup, nulls = result.results
    assert (dup.passed, dup.observed) == (duplicated == 0, duplicated)
    assert nulls.observed == pytest.approx(fraction) and nulls.passed == (fraction <= max_fraction)


def test_the_cli_exits_0_on_failed_checks_and_1_when_they_cannot_run(warehouse: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A failed check is a result (ADR 0026): ``status`` ok, exit code 0, ``passed`` false."""
    import json

    from table_engine import cli

    base = ["check", "--warehouse", warehouse, "--table", "db.orders", "--checks"]
    assert cli.main([*base, '[{"check": "row_count", "min": 9}]']) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (line["status"], line["passed"], line["failed"]) == ("ok", False, ["row_count"])
    assert cli.main([*base, '[{"check": "null_fraction", "column": "nope"}]']) == 1
    out, err = capsys.readouterr()
    line = json.loads(out.strip().splitlines()[-1])
    assert (line["status"], line["retryable"]) == ("error", False)
    assert err.strip().splitlines()[-1] == ("error: check 'null_fraction(nope)' (null_fraction): unknown column "
                                            "'nope'; columns are ['id', 'dt', 'status', 'amount', 'day', 'price']")


def test_freshness_and_volume_read_snapshot_metadata(tmp_path: pathlib.Path) -> None:
    """Freshness: the latest data commit (not a compaction) within max_age of the clock; volume: its row delta
    within median / factor .. median * factor of the earlier data commits, not judged with too few of them."""
    from table_engine.clock import ManualClock, use_clock

    hour = 3_600_000
    clock = ManualClock(1_800_000_000_000)
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    t = Catalog(str(tmp_path / "w")).create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})

    def write(rows: int, start: int = 0) -> None:
        t.write(pa.table({"id": list(range(start, start + rows)), "v": ["x"] * rows}, schema=schema))

    checks = parse_checks([{"check": "freshness", "max_age": "2 h"}, {"check": "volume", "history": 6}])
    with use_clock(clock):
        first = run_checks(t, checks)  # no snapshot yet
        assert [r.passed for r in first.results] == [False, True]
        assert first.results[0].message == "no snapshot yet" and first.results[1].message.startswith("not judged")
        for i in range(4):
            write(10, 10 * i)
            clock.advance(hour // 4)
        early = run_checks(t, checks).results
        assert early[0].passed and early[0].observed == 900.0, early[0]
        assert early[1].passed and early[1].message.startswith("not judged: 3 earlier data commits retained "
                                                               "(needs 5)"), early[1]
        for i in range(4, 7):
            write(10, 10 * i)
        t.maintenance.compact(full=True)  # a COMPACT snapshot: not a data commit for either check
        clock.advance(3 * hour)
        stale, usual = run_checks(t, checks).results
        assert not stale.passed and stale.observed == 3 * 3600.0, stale
        appended = max(s.id for s in t.snapshots() if str(s.commit_kind) == "APPEND")
        assert str(t.latest_snapshot().commit_kind) == "COMPACT"  # type: ignore[union-attr]
        assert f"last data commit: snapshot {appended} (APPEND) 3 h ago" == stale.message, stale
        assert stale.expected == "a data commit within 2 h"
        assert usual.passed and usual.observed == 10 and "median of 10 (bounds 1 to 100)" in usual.message, usual
        write(500, 1000)
        spike = run_checks(t, checks).results[1]
        assert not spike.passed and spike.observed == 500, spike
        assert f"snapshot {t.latest_snapshot_id()} wrote 500 rows" in spike.message, spike
    with pytest.raises(CheckError, match=r"check 1 \(freshness\): max_age must be a duration"):
        parse_checks([{"check": "freshness", "max_age": "soon"}])
    with pytest.raises(CheckError, match="min_history 9 is greater than history 3"):
        parse_checks([{"check": "volume", "history": 3, "min_history": 9}])
    with pytest.raises(CheckError, match="factor must be a number greater than 1"):
        parse_checks([{"check": "volume", "factor": 1}])
    with pytest.raises(CheckError, match="where does not apply"):
        run_checks(t, parse_checks([{"check": "freshness", "max_age": "1 h", "where": [["id", ">", 1]]}]))
