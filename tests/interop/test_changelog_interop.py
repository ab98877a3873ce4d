"""Tables with changelog files (``changelog-producer`` input, lookup, full-compaction) written by our engine:
pypaimon 2.1.0 reads their data identically, and its streaming scan reads the same changelog, row for row."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.table import Table
from tests.interop.conftest import RESULT_PREFIX, PypaimonClient
from tests.table_engine.store.changelog_support import changelogs

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).resolve().parent / "pypaimon_changelog_driver.py"
S = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int64())])
AGG = {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
       "fields.v.aggregate-function": "last_non_null_value"}
CASES: dict[str, dict[str, str]] = {
    "input": {"changelog-producer": "input"},
    "lookup": {"changelog-producer": "lookup"},
    "lookup_dedup_rows": {"changelog-producer": "lookup", "changelog-producer.row-deduplicate": "true"},
    "lookup_partial": {"changelog-producer": "lookup", "merge-engine": "partial-update"},
    "lookup_agg": {"changelog-producer": "lookup", **AGG},
    "lookup_first_row": {"changelog-producer": "lookup", "merge-engine": "first-row"},
    "full": {"changelog-producer": "full-compaction", "full-compaction.delta-commits": "2"},
    "full_agg": {"changelog-producer": "full-compaction", "full-compaction.delta-commits": "1", **AGG},
}
INSERT_ONLY = {"lookup_partial", "lookup_agg", "lookup_first_row", "full_agg"}


def pypaimon_changelog(python: str, warehouse: Path, table: str) -> list[list[Any]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONNOUSERSITE"] = "1"
    proc = subprocess.run([python, str(DRIVER), str(warehouse), table], capture_output=True, text=True,
                          timeout=600, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith(RESULT_PREFIX)][-1]
    result: list[list[Any]] = json.loads(line[len(RESULT_PREFIX):])
    return result


def fill(t: Table, insert_only: bool) -> None:
    w = t.new_write()  # one writer across commits, as a streaming job (full-compaction.delta-commits counts)
    batches = [
        ([1, 2, 3, 4], ["a", "b", None, "d"], [1, 2, 3, None], None),
        ([2, 5, 2], ["B", "e", None], [10, 5, 1], None),
        ([3, 6], ["c", "f"], [7, None], ["-D", "+I"]),
        ([1, 4, 7], [None, "D", "g"], [4, 4, 4], None),
        ([6, 1], ["F", "a"], [None, 2], None),
    ]
    for ids, vs, ns, kinds in batches:
        if insert_only and kinds:
            kinds = None
        w.write(pa.table({"id": ids, "v": vs, "n": ns}, schema=S), kinds)
        t.commit(w.prepare_commit())


@pytest.mark.parametrize("name", sorted(CASES))
def test_pypaimon_reads_tables_with_changelog(pypaimon: PypaimonClient, tmp_path: Path, name: str) -> None:
    t = Catalog(str(tmp_path)).create_table(f"cl.{name}", S, primary_keys=["id"],
                                            options={"bucket": "2", **CASES[name]})
    fill(t, name in INSERT_ONLY)
    if CASES[name]["changelog-producer"] == "full-compaction":
        t.maintenance.compact(full=True)
    ours = changelogs(t)
    assert ours  # the table has changelog files
    # data: the same rows
    theirs = pypaimon.read(tmp_path, f"cl.{name}").sort_by("id").to_pylist()
    assert theirs == t.read().sort_by("id").to_pylist()
    # changelog: pypaimon's streaming scan reads our changelog files, row for row (its split order is by bucket)
    got = pypaimon_changelog(pypaimon.python, tmp_path, f"cl.{name}")
    expected = [[sid, *row] for sid, rows in sorted(ours.items()) for row in rows]
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    for sid in ours:  # within a snapshot and key, the same order
        for key in {r[2] for r in expected if r[0] == sid}:
            assert [r for r in got if r[0] == sid and r[2] == key] == [
                r for r in expected if r[0] == sid and r[2] == key]
