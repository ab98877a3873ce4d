"""``--snapshot-property`` (issue 27): every command whose run commits a snapshot takes it, and every snapshot the
run commits carries it (Paimon 1.2's snapshot ``properties``); the run identity keys read back through
``Table.metadata()``; bad properties are a one-line error with the table unchanged."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import main
from table_engine.errors import CommandError, DataError
from table_engine.ops import REGISTRY, CommittingCommand, Compact, ConsumeChangelog, Write, committing_commands
from table_engine.ops.run import run_command
from table_engine.run_identity import KEYS, RunIdentity
from table_engine.store.committing.scoped_properties import scoped_properties, snapshot_properties_scope
from tests.table_engine.test_bad_input import warehouse_state

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
RUN = RunIdentity("etl", "manual__2026-11-27T00:00:00+00:00", "load", map_index=3, try_number=2)


def source(tmp_path: pathlib.Path, ids: list[int], dts: list[str]) -> str:
    src = tmp_path / f"src{ids[0]}"
    src.mkdir()
    pq.write_table(pa.table({"id": ids, "dt": dts}, schema=SCHEMA), src / "a.parquet")
    return str(src)


def flags(props: dict[str, str]) -> list[str]:
    return [a for k, v in props.items() for a in ("--snapshot-property", f"{k}={v}")]


def test_the_committing_commands_are_derived_from_their_class() -> None:
    names = {c.name for c in committing_commands()}
    assert names == {"write", "compact", "expire-partitions", "consume-changelog", "drop-partitions",
                     "rewrite-file-index", "rescale", "compact-manifest", "remove-unexisting-files", "maintain",
                     "compact-database", "refresh-object-table", "delete", "update", "merge-into", "clone",
                     "migrate-table", "migrate-database"}
    for name, cls in REGISTRY.items():  # the flag exists exactly on those
        has = any(f.name == "snapshot_properties" for f in dataclasses.fields(cls))
        assert has == issubclass(cls, CommittingCommand), name


def test_every_committing_command_stamps_its_snapshots(warehouse: str, tmp_path: pathlib.Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    catalog = Catalog(warehouse)
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                 options={"bucket": "1", "changelog-producer": "input"})
    props = RUN.to_properties()
    base = ["--warehouse", warehouse, "--table", "db.t", *flags(props)]

    def result(argv: list[str]) -> dict[str, Any]:
        capsys.readouterr()
        assert main(argv) == 0
        return dict(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))

    src = source(tmp_path, [1, 2, 3], ["2020-01-01", "2020-01-02", "2020-01-03"])
    sids = [result(["write", *base, "--source", src])["snapshot_id"]]
    sids.append(result(["compact", *base, "--full"])["snapshot_id"])
    sids.append(result(["rewrite-file-index", *base])["snapshot_id"] or sids[-1])
    sids.append(result(["rescale", *base, "--bucket-num", "1"])["snapshot_id"])
    sids.append(result(["drop-partitions", *base, "--partition", "dt=2020-01-03"])["snapshot_id"])
    expired = result(["expire-partitions", *base, "--expiration-time", "1 d", "--timestamp-formatter", "yyyy-MM-dd"])
    sids.append(expired["snapshot_id"])
    # its commit facts, as every committing command's (the lineage's outputStatistics, the Asset event's extra)
    assert {k: expired["commit"][k] for k in ("deleted_rows", "added_rows", "added_files", "partitions")} == {
        "deleted_rows": 2, "added_rows": 0, "added_files": 0, "partitions": ["dt=2020-01-01", "dt=2020-01-02"]}
    assert None not in sids and sids == sorted(sids)
    for sid in range(1, table.latest_snapshot_id() + 1):  # type: ignore[operator]
        assert table.snapshot(sid).properties == props, sid
        assert table.metadata().run_of(sid) == RUN
    assert [s.id for s in table.metadata().snapshots_of_run(RUN.run_id)] == list(range(1, sids[-1] + 1))
    assert table.metadata().snapshots_of_run(RUN.run_id, dag_id="other") == []

    # consume-changelog into a target: the target's snapshot carries them; without the flag nothing is added
    target = catalog.create_table("db.target", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                  options={"bucket": "1"})
    catalog.get_table("db.t").write(pa.table({"id": [9], "dt": ["2030-01-01"]}, schema=SCHEMA))
    assert table.metadata().run_of(table.latest_snapshot_id()) is None  # type: ignore[arg-type]
    out = run_command(ConsumeChangelog(warehouse=warehouse, table="db.t", consumer_id="c", target_table="db.target",
                                       snapshot_properties={"k": "v", **props}))
    assert out["target_snapshot_id"] is not None
    assert target.snapshot(out["target_snapshot_id"]).properties == {"k": "v", **props}


def test_postpone_compaction_stamps_its_snapshots(warehouse: str, tmp_path: pathlib.Path) -> None:
    table = Catalog(warehouse).create_table("db.pp", SCHEMA, primary_keys=["id", "dt"], options={"bucket": "-2"})
    src = source(tmp_path, [1, 2], ["a", "b"])
    run_command(Write(warehouse=warehouse, table="db.pp", source=src, snapshot_properties={"who": "w"}))
    out = run_command(Compact(warehouse=warehouse, table="db.pp", snapshot_properties={"who": "c"}))
    assert table.snapshot(1).properties == {"who": "w"} and out["snapshot_id"] == 2
    assert table.snapshot(2).properties == {"who": "c"} and table.metadata().run_of(2) is None


def test_bad_properties_fail_in_one_line_and_change_nothing(warehouse: str, tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    Catalog(warehouse).create_table("db.b", SCHEMA, options={"bucket": "-1"})
    src = source(tmp_path, [1], ["a"])
    before = warehouse_state(warehouse)
    def fails(argv: list[str]) -> None:
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code  # type: ignore[assignment]
        assert code not in (0, None)

    for bad in ("novalue", "=v"):
        capsys.readouterr()
        fails(["write", "--warehouse", warehouse, "--table", "db.b", "--source", src, "--snapshot-property", bad])
        err = capsys.readouterr().err.strip().splitlines()
        assert any("--snapshot-property" in line and bad in line for line in err), err
    with pytest.raises(CommandError, match="--snapshot-property must map non-empty keys to strings"):
        Write(warehouse=warehouse, table="db.b", source=src, snapshot_properties={"k": 1})  # type: ignore[dict-item]
    with pytest.raises(CommandError, match="--snapshot-property must map non-empty keys"):
        Compact.from_dict({"warehouse": warehouse, "table": "db.b", "snapshot_properties": {"": "v"}})
    # a command that commits no snapshot has no such flag
    fails(["create-tag", "--warehouse", warehouse, "--table", "db.b", "--tag", "x", "--snapshot-property", "k=v"])
    assert warehouse_state(warehouse) == before


def test_scopes_nest_and_explicit_properties_win() -> None:
    assert scoped_properties() is None
    with snapshot_properties_scope({"a": "1", "b": "1"}):
        with snapshot_properties_scope({"b": "2"}):
            assert scoped_properties({"c": "3"}) == {"a": "1", "b": "2", "c": "3"}
            assert scoped_properties({"a": "x"}) == {"a": "x", "b": "2"}
        assert scoped_properties() == {"a": "1", "b": "1"}
    assert scoped_properties() is None
    with pytest.raises(DataError, match="snapshot properties map strings to strings"):
        with snapshot_properties_scope({"a": 1}):  # type: ignore[dict-item]
            pass


def test_run_identity_round_trips_and_reads_what_it_can() -> None:
    assert list(RUN.to_properties()) == list(KEYS)
    assert RunIdentity.of(RUN.to_properties()) == RUN
    assert RunIdentity.of({"k": "v"}) is None and RunIdentity.of(None) is None
    partial = {k: v for k, v in RUN.to_properties().items() if k.endswith(("dag-id", "run-id", "task-id"))}
    assert RunIdentity.of(partial) == RunIdentity(RUN.dag_id, RUN.run_id, RUN.task_id)
    assert RunIdentity.of({**RUN.to_properties(), "airflow.map-index": "x"}) == dataclasses.replace(RUN, map_index=-1)
