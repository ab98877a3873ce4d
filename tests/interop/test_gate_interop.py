"""The capability gate on real tables that pypaimon 2.1.0 wrote with features of Paimon 1.1-2.0 (BLOB, VARIANT and
VECTOR columns, row tracking, data evolution with an update of some columns, a BTree global index, a primary-key
table with ``pk-btree.index.columns``).

Every mutating command, through the CLI (the command layer the operators and the Spark application use) and the
``Table`` API, fails with one ``UnsupportedTableFeatureError`` line naming the feature, ``retryable: false`` in the
result line, and the whole warehouse byte-for-byte unchanged. Reads are refused where they could be wrong (new types,
data evolution) and allowed where the feature cannot change the rows (row tracking, indexes). pypaimon makes
all tables in one subprocess call; each test works on its own copy of that warehouse.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shutil
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import main
from table_engine.errors import UnsupportedTableFeatureError
from table_engine.io.file_io import LocalFileIO
from table_engine.table import Table
from tests.interop.conftest import PypaimonClient
from tests.table_engine.test_cli_errors import state

pytestmark = pytest.mark.interop

# table -> (the feature the error names, the features it must also list, whether reads are allowed)
TABLES: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "db.pk_index": ("pk-<type>.index.columns", (), True),
}
#: tables of the warehouse whose features the engine supports (row tracking; data evolution and global indexes,
#: which tests/interop/test_data_evolution_interop.py and test_global_index_interop.py check: issue 23), read like
#: the others
SUPPORTED = ("db.row_tracking", "db.data_evolution", "db.global_index")
#: tables of the warehouse the engine supports and other modules test (VARIANT, VECTOR: test_new_types_interop.py;
#: BLOB: test_blob_interop.py and test_blob_write_interop.py)
TESTED_ELSEWHERE = ("db.variant", "db.vector", "db.blob")


@pytest.fixture(scope="module")
def gate_warehouse(pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path,
                                                                                                 dict[str, int]]:
    wh = tmp_path_factory.mktemp("gate") / "warehouse"
    result = pypaimon.run({"command": "gate_tables", "warehouse": str(wh)})
    assert sorted(result["tables"]) == sorted([*TABLES, *SUPPORTED, *TESTED_ELSEWHERE])
    return wh, result["rows"]


def cli_commands(wh: str, table: str, tmp: pathlib.Path) -> list[list[str]]:
    """Every mutating command of the CLI on ``table``."""
    base = ["--warehouse", wh, "--table", table]
    source = tmp / "rows.parquet"
    pq.write_table(pa.table({"id": pa.array([9], pa.int64())}), source)
    return [
        ["compact", *base],
        ["compact", *base, "--full"],
        ["expire-snapshots", *base, "--retain-max", "1", "--retain-min", "1"],
        ["expire-tags", *base, "--older-than", "2020-01-01"],
        ["expire-partitions", *base, "--expiration-time", "1 d", "--timestamp-formatter", "yyyy-MM-dd"],
        ["remove-orphan-files", *base, "--older-than", "2020-01-01"],
        ["create-tag", *base, "--tag", "t1"],
        ["delete-tag", *base, "--tag", "t1", "--ignore-if-not-exists"],
        ["rollback", *base, "--snapshot", "1"],
        ["drop-partitions", *base, "--partition", "id=1"],
        ["rewrite-file-index", *base],
        ["consume-changelog", *base, "--consumer-id", "c", "--output", str(tmp / "changes")],
        ["write", *base, "--source", str(source)],
    ]


API_CALLS: list[tuple[str, Callable[[Table], Any]]] = [
    ("write", lambda t: t.write(pa.table({"id": pa.array([9], pa.int64())}))),
    ("compact", lambda t: t.maintenance.compact(full=True)),
    ("expire_snapshots", lambda t: t.expire_snapshots()),
    ("remove_orphan_files", lambda t: t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))),
    ("create_tag", lambda t: t.create_tag("t1")),
    ("rollback_to", lambda t: t.rollback_to(1)),
    ("alter", lambda t: t.alter()),
    ("changelog_consumer", lambda t: t.changelog_consumer("c")),
]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_mutating_command_refuses_and_changes_nothing(
        gate_warehouse: tuple[pathlib.Path, dict[str, int]], table: str, tmp_path: pathlib.Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    wh = tmp_path / "warehouse"
    shutil.copytree(gate_warehouse[0], wh)
    feature, also, _ = TABLES[table]
    before = state(str(wh))
    for argv in cli_commands(str(wh), table, tmp_path):
        assert main(argv) == 1, argv
        out, err = capsys.readouterr()
        result = json.loads(out.strip().splitlines()[-1])
        assert result["status"] == "error" and result["retryable"] is False, (argv, result)
        line = err.strip().splitlines()[-1]
        assert line.startswith("error: "), (argv, line)
        assert f"table {table} uses {feature} " in line, (argv, line)
        # maintenance also reads the latest snapshot and its index manifest; a write checks the schema first
        assert argv[0] == "write" or all(a in line for a in also), (argv, line)
        assert state(str(wh)) == before, argv
    t = Catalog(str(wh)).get_table(table)
    for name, call in API_CALLS:
        with pytest.raises(UnsupportedTableFeatureError, match=f"uses {feature} ") as info:
            call(t)
        assert info.value.retryable is False and info.value.feature == feature, name
        assert state(str(wh)) == before, name


@pytest.mark.parametrize("table", sorted([*TABLES, *SUPPORTED]))
def test_reads_are_refused_where_they_could_be_wrong(gate_warehouse: tuple[pathlib.Path, dict[str, int]],
                                                     table: str) -> None:
    wh, rows = gate_warehouse
    before = state(str(wh))
    t = Catalog(str(wh)).get_table(table)
    feature, _, readable = TABLES.get(table, ("", (), True))
    assert t.schema.fields  # the schema parses: the types are carried, not "corrupt"
    if readable:
        assert t.read().num_rows == rows[table]
        assert t.read(filter=[("id", ">", 1)]).column("id").to_pylist() == list(range(2, rows[table] + 1))
        assert t.read(snapshot_id=1).num_rows == 3
    else:
        with pytest.raises(UnsupportedTableFeatureError, match=f"uses {feature} .* for read"):
            t.read()
        with pytest.raises(UnsupportedTableFeatureError):
            list(t.to_batches())
    latest = t.latest_snapshot()  # metadata stays visible
    assert latest is not None and latest.id >= 1
    assert state(str(wh)) == before


def unknown_file_kind_copy(wh: pathlib.Path, dst: pathlib.Path) -> pathlib.Path:
    """A copy of warehouse ``wh`` whose ``db.blob`` has its ``.blob`` files renamed to ``.vortex`` (on disk and in
    its manifests): a table whose schema passes the gate for maintenance and whose data files are of a kind the
    engine does not know."""
    from table_engine.format.manifest import read_manifest, write_manifest

    shutil.copytree(wh, dst)
    table_dir = dst / "db.db" / "blob"
    io = LocalFileIO()
    for m in (table_dir / "manifest").glob("manifest-*"):
        if m.name.startswith("manifest-list-"):
            continue
        entries = read_manifest(io, str(m))
        m.unlink()
        write_manifest(io, str(m), [dataclasses.replace(e, file=dataclasses.replace(
            e.file, file_name=e.file.file_name.replace(".blob", ".vortex"))) for e in entries])
    for f in table_dir.rglob("*.blob"):
        f.rename(f.with_suffix(".vortex"))
    return dst


def test_compaction_planning_checks_each_file_it_would_rewrite(
        gate_warehouse: tuple[pathlib.Path, dict[str, int]], tmp_path: pathlib.Path) -> None:
    """Below the table's schema gate (e.g. a Spark task's plan), the files themselves show the feature."""
    from table_engine.store.compaction.compact import plan_compaction

    wh = unknown_file_kind_copy(gate_warehouse[0], tmp_path / "warehouse")
    t = Catalog(str(wh)).get_table("db.blob")
    with pytest.raises(UnsupportedTableFeatureError, match="uses unknown data-file kind \\(data file "):
        plan_compaction(t.store)


def test_maintenance_walks_check_each_file_they_find(gate_warehouse: tuple[pathlib.Path, dict[str, int]],
                                                     tmp_path: pathlib.Path) -> None:
    """Below the table's gate, expiry's walk refuses files of a kind it does not know (``.vortex`` files) before
    deleting; orphan cleanup, which keeps every file a manifest names whatever its kind, deletes nothing of such a
    table."""
    from table_engine.store.lifecycle.expire import ExpireConfig, expire_snapshots
    from table_engine.store.lifecycle.orphans import remove_orphan_files

    wh = unknown_file_kind_copy(gate_warehouse[0], tmp_path / "warehouse")
    t = Catalog(str(wh)).get_table("db.blob")
    before = state(str(wh))
    with pytest.raises(UnsupportedTableFeatureError, match="uses unknown data-file kind \\(data file "):
        expire_snapshots(t.store, ExpireConfig.from_options(t.options, {"retain_max": 1, "retain_min": 1,
                                                                       "older_than_millis": 2**62}))
    assert remove_orphan_files(t.store, int(time.time() * 1000)).count == 0
    assert state(str(wh)) == before
