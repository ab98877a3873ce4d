"""What a user meets in the UI without running anything: each DAG's own doc, form labels, the rollback DAG parsed
without reading the warehouse (so its version changes only with its code), and ``make demo`` kept out of
``make airflow``'s metadata database."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from tests import airflow_env

SECTIONS = ("**When it runs:**", "**What it leaves behind:**")
FILE_IO_CALLS = ("read_bytes", "open_input", "file_size", "exists", "is_file", "list_status", "walk")


def test_every_dag_has_its_own_doc(dagbag: Any) -> None:
    docs = {dag_id: dag.doc_md for dag_id, dag in dagbag.dags.items()}
    assert len(set(docs.values())) == len(docs), "two DAGs share a doc"
    for dag_id, doc in docs.items():
        assert doc and all(s in doc for s in SECTIONS), dag_id
        assert dagbag.dags[dag_id].description.split(" ")[0].rstrip(":") in doc, dag_id
        # its form is documented: every Param by its title and name
        for name, param in dagbag.dags[dag_id].params.items():
            assert f"**{param.schema['title']}** (`{name}`)" in doc, (dag_id, name)
        # Markdown in paragraphs, not one run-on block: each section starts a paragraph
        assert all(f"\n\n{s}" in doc for s in SECTIONS), dag_id


def marked_required(schema: dict[str, Any]) -> bool:
    """Whether Airflow 3.3's form puts a red ``*`` on a field: it has a ``type`` and that type excludes null (the
    UI's FlexibleForm rule)."""
    kind = schema.get("type")
    return bool(kind) and (not isinstance(kind, list) or "null" not in kind)


def accepts_empty(schema: dict[str, Any]) -> bool:
    """Whether a field's schema lets it be left empty: a text without minLength, pattern or enum; a list without
    minItems; a switch (it always has a value)."""
    kind = schema.get("type")
    if kind == "string":
        return not (schema.get("minLength") or schema.get("pattern") or schema.get("enum"))
    if kind == "array":
        return not schema.get("minItems")
    return kind == "boolean"


def test_only_fields_that_need_a_value_are_marked_required(dagbag: Any) -> None:
    """A red ``*`` means the form cannot be sent without a value: never on a switch or on a field that may be left
    empty (those are nullable, or, switches, ``flag_param``: no type, ``enum: [true, false]``)."""
    from airflow.sdk import Param
    from airflow.sdk.definitions.param import ParamValidationError

    starred = []
    for dag_id, dag in dagbag.dags.items():
        for name, param in dag.params.items():
            if marked_required(param.schema) and accepts_empty(param.schema):
                starred.append(f"{dag_id}.{name}")
            if isinstance(param.value, bool):
                assert param.schema.get("enum") == [True, False] and "type" not in param.schema, (dag_id, name)
    assert starred == [], starred
    from paimon_provider.utils.maintenance import flag_param

    flag: Param = flag_param(True, title="Dry run", description="d")
    assert flag.resolve(False) is False
    with pytest.raises(ParamValidationError):
        flag.resolve("yes")  # type: ignore[arg-type]


def test_every_param_has_a_title(dagbag: Any) -> None:
    for dag_id, dag in dagbag.dags.items():
        for name, param in dag.params.items():
            title = param.schema.get("title")
            assert isinstance(title, str) and title and title != name, f"{dag_id}.{name}: {title!r}"


@pytest.fixture
def rollback_warehouse(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> Iterator[Any]:
    """A warehouse holding the rollback DAG's default table (two snapshots, a tag), as its connection."""
    import example_lake as sample

    from table_engine import Catalog

    warehouse = str(tmp_path / "warehouse")
    table = Catalog(warehouse).create_table(sample.PRIMARY_KEY_TABLES[0], pa.schema([("id", pa.int64())]),
                                            primary_keys=["id"], options={"bucket": "1"})
    table.write(pa.table({"id": [1]}))
    table.write(pa.table({"id": [2]}))
    table.create_tag("before", 1)
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(warehouse))
    yield table


def _parse_rollback_dag() -> dict[str, Any]:
    """The rollback DAG as the DAG processor stores it: parsed afresh from its file, serialized."""
    from airflow.dag_processing.dagbag import DagBag
    from airflow.serialization.serialized_objects import DagSerialization

    bag = DagBag(dag_folder=str(airflow_env.DAGS_FOLDER / "paimon_maintenance.py"))
    assert bag.import_errors == {}
    data: dict[str, Any] = DagSerialization.to_dict(bag.dags["paimon_rollback"])
    return data


def test_rollback_dag_parse_reads_no_warehouse_file(rollback_warehouse: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.models.serialized_dag import SerializedDagModel

    from table_engine.io.file_io import LocalFileIO

    calls: list[str] = []
    for name in FILE_IO_CALLS:
        original = getattr(LocalFileIO, name)

        def counted(self: Any, *args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(f"{_name}{args}")
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(LocalFileIO, name, counted)
    before = _parse_rollback_dag()
    assert calls == [], calls  # the DAG file's parse touched no warehouse file
    monkeypatch.undo()
    rollback_warehouse.write(pa.table({"id": [3]}))  # a new snapshot and a new tag: the DAG's version stays
    rollback_warehouse.create_tag("after")
    after = _parse_rollback_dag()
    assert SerializedDagModel.hash(after) == SerializedDagModel.hash(before)


def test_rollback_run_lists_the_tables_snapshots_and_tags(rollback_warehouse: Any) -> None:
    from paimon_provider.utils.maintenance import RECENT_SNAPSHOTS, rollback_targets

    found = rollback_targets(rollback_warehouse)
    assert found.tags == {"before": 1}
    assert [s[0] for s in found.snapshots] == [2, 1] and found.snapshots[0][1] == "APPEND"
    tags, snapshots = found.lines("dwd.orders")
    assert tags == "tags of dwd.orders: before (snapshot 1)"
    assert snapshots.startswith("latest snapshots of dwd.orders: 2 (APPEND, ") and "; 1 (APPEND, " in snapshots
    for i in range(RECENT_SNAPSHOTS + 2):
        rollback_warehouse.write(pa.table({"id": [10 + i]}))
    assert len(rollback_targets(rollback_warehouse).snapshots) == RECENT_SNAPSHOTS


def test_rollback_dag_lists_targets_before_it_rolls_back(dagbag: Any) -> None:
    dag = dagbag.dags["paimon_rollback"]
    first = dag.get_task("list_snapshots_and_tags")
    assert first.downstream_task_ids == {"rollback"} and not first.upstream_task_ids
    assert "{{ params.table }}" in str(first.op_kwargs["table"])


def test_demo_runs_stay_out_of_the_served_airflow(tmp_path: pathlib.Path) -> None:
    from scripts import airflow_demo as demo

    home, lake = tmp_path / "home", tmp_path / "lake"
    run, serve = demo.run_env(home, lake), demo.serve_env(home, lake, 8080)
    key = "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"
    assert run[key] == f"sqlite:///{home / demo.RUN_DB}" and serve[key] == f"sqlite:///{home / demo.SERVE_DB}"
    assert run[key] != serve[key]
    # the rest is the same Airflow: home, DAGs, secrets; the same connections (serve creates them in its metadata
    # database, run passes them as variables of its own process)
    same = ("AIRFLOW_HOME", "AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__API__SECRET_KEY", "AIRFLOW__API_AUTH__JWT_SECRET")
    assert {k: run[k] for k in same} == {k: serve[k] for k in same}
    conns = demo.demo_connections(lake)
    assert {k: v for k, v in run.items() if k.startswith("AIRFLOW_CONN_")} == {
        f"AIRFLOW_CONN_{c.upper()}": json.dumps(v) for c, v in conns.items()}
    assert not any(k.startswith("AIRFLOW_CONN_") for k in serve)
