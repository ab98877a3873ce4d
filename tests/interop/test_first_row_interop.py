"""pypaimon 2.1.0 reads the first-row tables our engine writes with the expected rows.

Paimon's batch reads skip level 0 of first-row tables (``batchScanSkipLevel0``), so a writer must compact every
commit's level-0 files up (lookup compaction) for its rows to be visible. These tables use default options
(dynamic bucket, changelog-producer none) and fixed buckets, partitioned and not, several commits whose keys repeat
inside a commit and across commits: the expected rows are the first row written for each key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from table_engine import Catalog
from tests.interop.conftest import PypaimonClient

pytestmark = pytest.mark.interop

DATABASE = "fr"
SCHEMA = pa.schema([("dt", pa.string()), ("k", pa.int64()), ("v", pa.string()), ("n", pa.int32())])

CASES: dict[str, dict[str, Any]] = {
    "plain": {"partition_by": [], "primary_keys": ["k"], "options": {"merge-engine": "first-row"}},
    "partitioned": {"partition_by": ["dt"], "primary_keys": ["dt", "k"], "options": {"merge-engine": "first-row"}},
    "fixed_buckets": {"partition_by": ["dt"], "primary_keys": ["dt", "k"],
                      "options": {"merge-engine": "first-row", "bucket": "3"}},
    "lookup_changelog": {"partition_by": [], "primary_keys": ["k"],
                         "options": {"merge-engine": "first-row", "bucket": "2", "changelog-producer": "lookup"}},
}


def _batches(seed: int, commits: int = 5, rows: int = 60) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    out = []
    for c in range(commits):
        data = [{"dt": f"2024-01-0{int(rng.integers(1, 3))}", "k": int(rng.integers(0, 40)),
                 "v": f"c{c}r{r}", "n": int(rng.integers(0, 100))} for r in range(rows)]
        out.append(pa.Table.from_pylist(data, schema=SCHEMA))
    return out


def _expected(batches: list[pa.Table], key: list[str]) -> list[dict[str, Any]]:
    first: dict[tuple[Any, ...], dict[str, Any]] = {}
    for b in batches:
        for r in b.to_pylist():
            first.setdefault(tuple(r[k] for k in key), r)
    return sorted(first.values(), key=lambda r: (r["dt"], r["k"]))


def _rows(t: pa.Table) -> list[dict[str, Any]]:
    return sorted(t.select(SCHEMA.names).to_pylist(), key=lambda r: (r["dt"], r["k"]))


@pytest.mark.parametrize("name", list(CASES))
def test_pypaimon_reads_our_first_row_table(pypaimon: PypaimonClient, tmp_path: Path, name: str) -> None:
    spec = CASES[name]
    ident = f"{DATABASE}.{name}"
    t = Catalog(str(tmp_path)).create_table(ident, SCHEMA, primary_keys=spec["primary_keys"],
                                            partition_keys=spec["partition_by"], options=spec["options"])
    batches = _batches(seed=len(name))
    versions = []
    for b in batches:
        t.write(b)
        versions.append({"snapshot": t.latest_snapshot_id()})
    theirs = pypaimon.read_many(tmp_path, ident, versions)
    for i, got in enumerate(theirs):
        expected = _expected(batches[:i + 1], spec["primary_keys"])
        assert _rows(got) == expected, f"pypaimon read of snapshot {versions[i]['snapshot']}"
    assert _rows(t.read()) == _expected(batches, spec["primary_keys"])


def test_pypaimon_sees_write_only_rows_after_compaction_and_overwrites_at_once(pypaimon: PypaimonClient,
                                                                               tmp_path: Path) -> None:
    key = ["dt", "k"]
    ident = f"{DATABASE}.write_only"
    t = Catalog(str(tmp_path)).create_table(ident, SCHEMA, primary_keys=key, partition_keys=["dt"],
                                            options={"merge-engine": "first-row", "write-only": "true"})
    batches = _batches(seed=7, commits=3)
    for b in batches:
        t.write(b)
    uncompacted = t.latest_snapshot_id()
    t.maintenance.compact()
    compacted = t.latest_snapshot_id()
    assert t.read(snapshot_id=uncompacted).num_rows == 0  # level 0 only: invisible, as to Paimon
    over = _batches(seed=8, commits=1)[0].filter(pc.field("dt") == "2024-01-01")
    t.copy({"write-only": "false"}).write(over, overwrite=True)
    theirs = pypaimon.read_many(tmp_path, ident, [{"snapshot": uncompacted}, {"snapshot": compacted}, {}])
    assert theirs[0].num_rows == 0
    assert _rows(theirs[1]) == _expected(batches, key)
    kept = [r for r in _expected(batches, key) if r["dt"] != "2024-01-01"]
    after = sorted(_expected([over], key) + kept, key=lambda r: (r["dt"], r["k"]))
    assert _rows(theirs[2]) == after
    assert _rows(t.read()) == after
