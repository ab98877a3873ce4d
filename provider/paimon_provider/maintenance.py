"""Building blocks for table-upkeep DAGs: one DAG per job, a form (Params) to run it by hand, one mapped task per
table.

A maintenance DAG built with these helpers takes a ``tables`` param (a list of ``database.table``), has valid
defaults for scheduled runs, and never depends on the logical date, so runs triggered from the UI (which have none)
work the same way::

    with maintenance_dag("paimon_expire_tags", description="...", schedule="@daily",
                         params={"tables": tables_param(["dwd.orders"], "expire tags of")}):
        for_each_table(PaimonExpireTagsOperator, task_id="expire_tags")

Only ``airflow.sdk`` is imported here: DAG files import this module at parse time.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from airflow.sdk import DAG, BaseOperator, Param, XComArg, task

from paimon_provider.connection import DEFAULT_CONN_ID

TABLE_PATTERN = r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$"
"""What a ``database.table`` param must look like."""

TABLE_NAME_RULE = ("'database.table': a database name, one dot, a table name (letters, digits and '_'; "
                   "e.g. dwd.orders)")
""":data:`TABLE_PATTERN` in words, for forms (Airflow's form shows descriptions; its refusal shows the pattern)."""

MAP_INDEX_TEMPLATE = "{{ task.table }}"
"""Mapped per-table tasks are labelled by their table (Airflow 3 ``map_index_template``), not ``[0]``, ``[1]``."""

RECENT_SNAPSHOTS = 10
"""How many of a table's latest snapshots a rollback form offers."""

DEFAULT_START = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
DEFAULT_ARGS: Mapping[str, Any] = {"retries": 1, "retry_delay": datetime.timedelta(minutes=1)}
DEFAULT_TAGS = ("paimon", "maintenance")


def tables_param(default: Sequence[str], what: str) -> Param:
    """The ``tables`` form field: a non-empty list of ``database.table`` names to ``what``."""
    return Param(list(default), type="array", items={"type": "string", "pattern": TABLE_PATTERN}, minItems=1,
                 description=f"Tables to {what}, one per line, each {TABLE_NAME_RULE}.")


def table_param(default: str, what: str) -> Param:
    """A single ``database.table`` form field."""
    return Param(default, type="string", pattern=TABLE_PATTERN, description=f"The table to {what}: {TABLE_NAME_RULE}.")


@dataclass(frozen=True)
class RollbackTargets:
    """What a table can be rolled back to, as read when the DAG file was parsed: its tags (with their snapshot) and
    its latest snapshots (id, kind, UTC time), newest first; ``note`` says why nothing was read."""

    tags: dict[str, int]
    snapshots: list[tuple[int, str, str]]
    note: str = ""


def rollback_targets(table: str, paimon_conn_id: str = DEFAULT_CONN_ID, limit: int = RECENT_SNAPSHOTS) \
        -> RollbackTargets:
    """The tags and latest snapshots of ``table`` for a rollback form, at DAG-parse time: cheap and never failing.

    The warehouse comes from the connection's ``AIRFLOW_CONN_<ID>`` environment variable only (no metadata DB or
    secrets backend at parse time) and only a local warehouse is read (an object store could stall the DAG
    processor); everything else, or any error, gives empty lists and a ``note``. Reads snapshot and tag files only,
    through the engine's read-only API."""
    raw = os.environ.get(f"AIRFLOW_CONN_{paimon_conn_id.upper()}")
    try:
        if not raw:
            return RollbackTargets({}, [], f"connection {paimon_conn_id} is not set in the environment")
        conn = json.loads(raw)
        extra = conn.get("extra") or {}
        extra = json.loads(extra) if isinstance(extra, str) else extra
        warehouse = str(extra.get("warehouse") or conn.get("host") or "")
        if "://" in warehouse and not warehouse.startswith("file://"):
            return RollbackTargets({}, [], f"{warehouse} is not read when DAGs are parsed")
        # imported here: DAG files import this module, and most DAGs never need the engine at parse time
        from table_engine.catalog import Catalog

        catalog = Catalog(warehouse)
        if not catalog.table_exists(table):
            return RollbackTargets({}, [], f"table {table} does not exist yet")
        t = catalog.get_table(table)
        tags = {tag.name: tag.snapshot.id for tag in t.tags()}
        latest = t.latest_snapshot_id()
        earliest = t.earliest_snapshot_id()
        snapshots = []
        if latest is not None and earliest is not None:
            for sid in range(latest, max(earliest, latest - limit + 1) - 1, -1):
                snap = t.snapshot(sid)
                when = datetime.datetime.fromtimestamp(snap.time_millis / 1000, datetime.UTC)
                snapshots.append((sid, str(snap.commit_kind), when.strftime("%Y-%m-%d %H:%M:%S")))
        return RollbackTargets(tags, snapshots)
    except Exception as e:  # noqa: BLE001 - a form hint must never fail the DAG's parse
        return RollbackTargets({}, [], f"could not read {table}: {type(e).__name__}")


def rollback_params(table: str, paimon_conn_id: str = DEFAULT_CONN_ID) -> dict[str, Param]:
    """The form of a rollback DAG: the table, and a snapshot id or a tag (both optional, exactly one is needed),
    offering the tags and latest snapshots of ``table`` read at parse time (:func:`rollback_targets`)."""
    found = rollback_targets(table, paimon_conn_id)
    where = (f" The table's {table}$snapshots and {table}$tags system tables list all (e.g. "
             f"Catalog(warehouse).get_table('{table}$snapshots').read()).")
    if found.snapshots:
        listed = "; ".join(f"{sid} ({kind}, {when} UTC)" for sid, kind, when in found.snapshots)
        snapshot_hint = f" Latest snapshots of {table} when this DAG was parsed: {listed}."
    else:
        snapshot_hint = f" No snapshots of {table} were read when this DAG was parsed ({found.note or 'none yet'})."
    if found.tags:
        tag_hint = f" Tags of {table} when this DAG was parsed: " + \
            ", ".join(f"{name} (snapshot {sid})" for name, sid in sorted(found.tags.items())) + "."
    else:
        tag_hint = f" {table} had no tags when this DAG was parsed."
    tag_extra: dict[str, Any] = {"examples": sorted(found.tags)} if found.tags else {}
    return {
        "table": table_param(table, "roll back"),
        "snapshot_id": Param(None, type=["null", "integer"], minimum=1,
                             description="Roll back to this snapshot id; leave empty to roll back to a tag "
                                         "instead (give one of the two)." + snapshot_hint + where),
        "tag": Param(None, type=["null", "string"],
                     description="Roll back to this tag; leave empty to roll back to a snapshot id instead "
                                 "(give one of the two)." + tag_hint, **tag_extra),
    }


@task
def selected_tables(**context: Any) -> list[str]:
    """The tables of this run, read from the ``tables`` param (a real list, not rendered text)."""
    return [str(t) for t in context["params"]["tables"]]


def maintenance_dag(dag_id: str, *, description: str, schedule: str | None, params: Mapping[str, Param],
                    doc_md: str | None = None, start_date: datetime.datetime = DEFAULT_START,
                    default_args: Mapping[str, Any] | None = DEFAULT_ARGS,
                    tags: Sequence[str] = DEFAULT_TAGS) -> DAG:
    """A DAG for one upkeep job: no catch-up, one run at a time, retries, the given form."""
    return DAG(dag_id=dag_id, description=description, schedule=schedule, start_date=start_date, catchup=False,
               max_active_runs=1, tags=list(tags), default_args=dict(default_args or {}), params=dict(params),
               doc_md=doc_md)


def for_each_table(operator: type[BaseOperator], *, task_id: str, tables: XComArg | None = None,
                   paimon_conn_id: str = DEFAULT_CONN_ID, **kwargs: Any) -> Any:
    """``operator`` mapped over the run's tables (default: :func:`selected_tables`, created here), each mapped task
    labelled by its table; ``kwargs`` are the same for every table (template them with ``{{ params.* }}``)."""
    if tables is None:
        tables = selected_tables()
    kwargs.setdefault("map_index_template", MAP_INDEX_TEMPLATE)
    return operator.partial(task_id=task_id, paimon_conn_id=paimon_conn_id, **kwargs).expand(table=tables)
