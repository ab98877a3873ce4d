"""The metadata hygiene DAGs (dags/paimon_hygiene.py) run with ``dag.test()`` from their forms (``run_conf`` as the
UI's trigger form sends it) on a small local table: the dry-run defaults change nothing, a real run does what its
doc says. Their forms name the fields of the commands they run (no field that the command does not take, no
argument of the command missing from the form)."""

from __future__ import annotations

import copy
import dataclasses
import pathlib
from typing import Any

import pyarrow as pa
import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(600)]

S = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
TABLE = "db.t"
# form field -> the command's field, where they differ; fields of every command the forms leave out (the table
# is a form field of its own, the warehouse and catalog options come from the connection, the commit user and the
# snapshot properties (the run identity) from the task instance)
RENAMED = {"older_than": "older_than_millis", "dry_run": "dry_run", "remove": "remove"}
NOT_IN_FORMS = {"warehouse", "table", "catalog_options", "commit_user", "snapshot_properties"}
DAGS = {"paimon_expire_changelogs": "expire-changelogs", "paimon_compact_manifest": "compact-manifest",
        "paimon_remove_unexisting_files": "remove-unexisting-files", "paimon_repair": "repair",
        "paimon_clear_consumers": "clear-consumers", "paimon_reset_consumer": "reset-consumer"}


def run(dagbag: Any, dag_id: str, conf: dict[str, Any]) -> dict[str, Any]:
    """Run ``dag_id`` with the form ``conf``; the XCom of its one Paimon task."""
    dr = dagbag.dags[dag_id].test(run_conf=conf)
    tis = dr.get_task_instances()
    assert str(dr.state) == "success", f"{dag_id}: {[(ti.task_id, ti.map_index, str(ti.state)) for ti in tis]}"
    (ti,) = [t for t in tis if t.task_id != "selected_tables"]  # the one Paimon task (one table)
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        (row,) = session.query(XComModel).filter(XComModel.dag_id == dr.dag_id, XComModel.run_id == dr.run_id,
                                                 XComModel.task_id == ti.task_id,
                                                 XComModel.key == "return_value").all()
        result: dict[str, Any] = XComModel.deserialize_value(row)
    return result


def test_forms_name_the_fields_of_their_commands(dagbag: Any) -> None:
    from table_engine.ops import command_class

    for dag_id, name in DAGS.items():
        params = dagbag.dags[dag_id].params
        assert ("tables" in params) != ("table" in params), dag_id  # every form names its table(s)
        form = {RENAMED.get(p, p) for p in params if p not in ("table", "tables")}
        fields = {f.name for f in dataclasses.fields(command_class(name))} - NOT_IN_FORMS
        assert form == fields, (dag_id, form ^ fields)
    # the two that could drop data are safe as they open; only the daily changelog expiry is scheduled
    assert dagbag.dags["paimon_compact_manifest"].params["dry_run"] is True
    assert dagbag.dags["paimon_remove_unexisting_files"].params["remove"] is False
    assert [d for d in DAGS if type(dagbag.dags[d].timetable).__name__ != "NullTimetable"] == \
        ["paimon_expire_changelogs"]
    # the form refuses what the command would refuse: a consumer id with '/', or blank; a count below 1
    from airflow.sdk.exceptions import ParamValidationError

    reset = copy.deepcopy(dagbag.dags["paimon_reset_consumer"].params)
    reset["consumer_id"] = "etl"
    for bad in ("a/b", " ", ""):
        with pytest.raises(ParamValidationError):
            reset["consumer_id"] = bad
    with pytest.raises(ParamValidationError):
        reset["next_snapshot_id"] = 0
    expire = copy.deepcopy(dagbag.dags["paimon_expire_changelogs"].params)
    with pytest.raises(ParamValidationError):
        expire["retain_max"] = 0


@pytest.fixture
def table(lake: dict[str, str]) -> Any:
    """A lookup-free input-changelog table of four commits expired to one snapshot: three long-lived changelogs."""
    from table_engine import Catalog

    t = Catalog(lake["warehouse"]).create_table(TABLE, S, primary_keys=["id"], options={
        "bucket": "1", "changelog-producer": "input", "changelog.num-retained.min": "50",
        "changelog.num-retained.max": "50"})
    for i in range(4):
        t.write(pa.table({"id": [i], "v": ["x"]}, schema=S))
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    return t


def test_hygiene_dags_from_their_forms(dagbag: Any, airflow_db: None, table: Any) -> None:
    from table_engine.format.changelog_file import list_changelog_ids

    one = {"table": TABLE}
    latest = table.latest_snapshot_id()

    # compact-manifest: a dry run as the form opens (nothing committed), then unticked: a COMPACT snapshot
    form = dict(dagbag.dags["paimon_compact_manifest"].params, **one)
    out = run(dagbag, "paimon_compact_manifest", form)
    assert out["needed"] and out["snapshot_id"] is None and table.latest_snapshot_id() == latest
    run(dagbag, "paimon_compact_manifest", {**form, "dry_run": False})
    compacted = table.latest_snapshot()
    assert compacted.id == latest + 1 and str(compacted.commit_kind) == "COMPACT"
    assert table.read().num_rows == 4

    # remove-unexisting-files: a data file gone; as the form opens only listed, with Remove ticked removed
    victim = sorted((pathlib.Path(table.path) / "bucket-0").glob("data-*"))[0]
    victim.unlink()
    form = dict(dagbag.dags["paimon_remove_unexisting_files"].params, **one)
    out = run(dagbag, "paimon_remove_unexisting_files", form)
    assert out["missing_files"] == 1 and out["snapshot_id"] is None and table.latest_snapshot_id() == latest + 1
    run(dagbag, "paimon_remove_unexisting_files", {**form, "remove": True})
    assert table.latest_snapshot_id() == latest + 2 and table.read().num_rows == 3

    # repair: a stale LATEST hint rewritten
    (pathlib.Path(table.path) / "snapshot" / "LATEST").write_text("2")
    out = run(dagbag, "paimon_repair", one)
    assert out["repaired"] and out["latest_snapshot_id"] == latest + 2
    assert (pathlib.Path(table.path) / "snapshot" / "LATEST").read_text().strip() == str(latest + 2)

    # reset-consumer: a consumer set to the latest snapshot (created); clear-consumers by pattern deletes it
    run(dagbag, "paimon_reset_consumer", {**one, "consumer_id": "etl", "next_snapshot_id": latest + 2})
    assert table.consumers() == {"etl": latest + 2}
    defaults = dict(dagbag.dags["paimon_clear_consumers"].params, table=TABLE)  # the form as it opens: a dry run
    out = run(dagbag, "paimon_clear_consumers", defaults)
    assert out["would_clear_consumers"] == ["etl"] and table.consumers() == {"etl": latest + 2}
    out = run(dagbag, "paimon_clear_consumers", {**defaults, "including_consumers": "et.*", "dry_run": False})
    assert out["cleared_consumers"] == ["etl"] and table.consumers() == {}

    # expire-changelogs: the daily defaults (the table's options: keep 50) expire nothing; the form's overrides do
    assert list_changelog_ids(table.file_io, table.path) == [1, 2, 3]
    form = dict(dagbag.dags["paimon_expire_changelogs"].params, tables=[TABLE])
    assert run(dagbag, "paimon_expire_changelogs", form)["expired_changelogs"] == []
    assert list_changelog_ids(table.file_io, table.path) == [1, 2, 3]
    out = run(dagbag, "paimon_expire_changelogs", {**form, "retain_max": 2, "retain_min": 1})
    assert out["expired_changelogs"] == [1, 2] and out["changelogs_left"] == 1
    assert list_changelog_ids(table.file_io, table.path) == [3]
