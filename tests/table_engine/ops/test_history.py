"""The ``history`` command: a table's commits newest first with their Airflow run identity, by kind and time, paged;
a time bound found by bisection (a few snapshot files read, not all), a long walk cut and resumable."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock, use_clock
from table_engine.errors import CommandError
from table_engine.ops import History
from table_engine.ops import history as history_module
from table_engine.ops.history import history, render_history
from table_engine.ops.run import run_command
from table_engine.run_identity import RunIdentity

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
MINUTE = 60_000
START = 1_800_000_000_000


@pytest.fixture
def table(tmp_path: pathlib.Path) -> object:
    """20 APPEND commits a minute apart by two Airflow runs (odd and even), then a full compaction."""
    clock = ManualClock(START)
    t = Catalog(str(tmp_path / "w")).create_table("db.t", SCHEMA, primary_keys=["id"],
                                                  options={"bucket": "1", "write-only": "true"})
    with use_clock(clock):
        for i in range(20):
            run = RunIdentity("load", f"manual__{i % 2}", "write", try_number=1 + i % 2)
            t.write(pa.table({"id": [i], "v": ["x"]}, schema=SCHEMA), properties=run.to_properties())
            clock.advance(MINUTE)
        t.maintenance.compact(full=True)
    return t


def test_newest_first_with_the_run_that_made_each(table: object) -> None:
    page = history(table, limit=3)  # type: ignore[arg-type]
    assert [(c.snapshot_id, c.commit_kind) for c in page.commits] == [(21, "COMPACT"), (20, "APPEND"), (19, "APPEND")]
    assert page.next_before_snapshot == 19 and page.scanned == 3
    appended = page.commits[1]
    assert (appended.dag_id, appended.run_id, appended.task_id, appended.try_number) == ("load", "manual__1", "write",
                                                                                         2)
    assert appended.delta_records == 1 and appended.time_millis == START + 19 * MINUTE
    assert page.commits[0].dag_id is None  # the compaction ran outside Airflow
    nxt = history(table, limit=3, before_snapshot=page.next_before_snapshot)  # type: ignore[arg-type]
    assert [c.snapshot_id for c in nxt.commits] == [18, 17, 16]
    every = history(table, limit=100)  # type: ignore[arg-type]
    assert [c.snapshot_id for c in every.commits] == list(range(21, 0, -1)) and every.next_before_snapshot is None


def test_by_kind_and_time(table: object) -> None:
    assert [c.snapshot_id for c in history(table, kinds=["compact"]).commits] == [21]  # type: ignore[arg-type]
    window = history(table, since_millis=START + 5 * MINUTE, until_millis=START + 7 * MINUTE)  # type: ignore[arg-type]
    assert [c.snapshot_id for c in window.commits] == [8, 7, 6]
    # the upper bound by bisection: a handful of snapshot files, not the 13 newer ones
    assert window.scanned <= 5 + 4, window.scanned
    with pytest.raises(CommandError, match=r"unknown commit kind\(s\) \['MERGE'\]; kinds are APPEND, COMPACT"):
        history(table, kinds=["merge"])  # type: ignore[arg-type]


def test_a_long_walk_is_cut_and_resumed(table: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_module, "MAX_SCAN", 5)
    page = history(table, kinds=["COMPACT"], before_snapshot=21)  # type: ignore[arg-type]
    assert page.commits == [] and page.next_before_snapshot == 16 and page.scanned == 5


def test_the_command_and_its_text(table: object) -> None:
    t = table
    result = run_command(History(warehouse=str(pathlib.Path(t.path).parents[1]), table="db.t", limit=2))  # type: ignore[attr-defined]
    assert [c["snapshot_id"] for c in result["commits"]] == [21, 20] and result["next_before_snapshot"] == 20
    text = render_history(result["commits"])
    assert "load / manual__1 / write try 2" in text and "COMPACT" in text
    assert render_history([]) == "no commit"
