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
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.sdk import DAG, BaseOperator, Param, XComArg, task

from paimon_provider.utils.connection import DEFAULT_CONN_ID

if TYPE_CHECKING:
    from table_engine.run_identity import RunIdentity
    from table_engine.table import Table

TABLE_PATTERN = r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$"
"""What a ``database.table`` param must look like."""

TABLE_NAME_RULE = ("'database.table': a database name, one dot, a table name (letters, digits and '_'; "
                   "e.g. dwd.orders)")
""":data:`TABLE_PATTERN` in words, for forms (Airflow's form shows descriptions; a refusal says it too, through the
plugin's middleware, :mod:`paimon_provider.plugins.form_errors`)."""

MAP_INDEX_TEMPLATE = "{{ task.table }}"
"""Mapped per-table tasks are labelled by their table (Airflow 3 ``map_index_template``), not ``[0]``, ``[1]``."""

RECENT_SNAPSHOTS = 10
"""How many of a table's latest snapshots a rollback run lists before it rolls back."""

DEFAULT_ARGS: Mapping[str, Any] = {"retries": 1, "retry_delay": datetime.timedelta(minutes=1)}
DEFAULT_TAGS = ("paimon", "maintenance")


def tables_param(default: Sequence[str], what: str, title: str = "Tables") -> Param:
    """The ``tables`` form field: a non-empty list of ``database.table`` names to ``what``."""
    return Param(list(default), type="array", items={"type": "string", "pattern": TABLE_PATTERN}, minItems=1,
                 title=title, description=f"Tables to {what}, one per line, each {TABLE_NAME_RULE}.")


def flag_param(default: bool, title: str, description: str) -> Param:
    """A yes/no form field (a switch). Its schema says ``enum: [true, false]`` rather than ``type: boolean``: Airflow
    3.3's form marks every field whose ``type`` excludes null as required (a red ``*``, which Airflow 2's form left off
    switches), and a switch always has a value; the API still refuses anything but true or false."""
    return Param(bool(default), enum=[True, False], title=title, description=description)


def table_param(default: str, what: str, title: str = "Table") -> Param:
    """A single ``database.table`` form field."""
    return Param(default, type="string", pattern=TABLE_PATTERN, title=title,
                 description=f"The table to {what}: {TABLE_NAME_RULE}.")


def dag_doc(what: str, *, when: str, leaves: str, params: Mapping[str, Param] | None = None,
            notes: str = "") -> str:
    """A DAG's ``doc_md`` (Markdown, shown on its page in the UI): what it does, when it runs, its form fields
    (derived from ``params``: title, name, description) and what it leaves behind."""
    parts = [what.strip(), f"**When it runs:** {when.strip()}"]
    if params:
        rows = [f"- **{p.schema.get('title', name)}** (`{name}`): {p.description or ''}".rstrip()
                for name, p in params.items()]
        parts.append("**Form fields (Params):**\n\n" + "\n".join(rows))
    parts.append(f"**What it leaves behind:** {leaves.strip()}")
    if notes:
        parts.append(notes.strip())
    return "\n\n".join(parts) + "\n"


def rollback_params(table: str) -> dict[str, Param]:
    """The form of a rollback DAG: the table, and what to roll back to in one required field (a snapshot id or a
    tag, as Paimon's ``rollback`` procedure takes its ``version``): a form that cannot succeed cannot be submitted.

    Nothing is read from the warehouse here (DAG files are parsed often, and a form built from the table's state
    would make a new DAG version at every snapshot): the run's first task, :func:`show_rollback_targets`, logs the
    table's tags and latest snapshots, each with the Airflow run that committed it."""
    return {
        "table": table_param(table, "roll back"),
        "version": Param(type="string", minLength=1, pattern=r"\S", title="Snapshot id or tag",
                         description="What to roll back to: a snapshot id (all digits, e.g. 3) or a tag name "
                                     "(tag:<name> for a tag whose name is all digits, e.g. tag:20261127). The "
                                     "run's first task (list_snapshots_and_tags) "
                                     "logs the table's tags and latest snapshots, each with the Airflow run that "
                                     f"committed it; the {table}$snapshots and "
                                     f"{table}$tags system tables list all."),
    }


@dataclass(frozen=True)
class RollbackTargets:
    """What a table can be rolled back to: its tags (with their snapshot) and its latest snapshots (id, kind, UTC
    time, and the Airflow run that committed it, ``<dag>.<task>[<map index>] in run <run id>``, or None when the
    snapshot names no run: docs/run-identity.md), newest first."""

    tags: dict[str, int]
    snapshots: list[tuple[int, str, str, str | None]]

    def lines(self, table: str) -> list[str]:
        """The targets as log lines."""
        out = [f"tags of {table}: " + (", ".join(f"{name} (snapshot {sid})" for name, sid in sorted(self.tags.items()))
                                       or "none")]
        out.append(f"latest snapshots of {table}: " + ("; ".join(
            f"{sid} ({kind}, {when} UTC{f', by {run}' if run else ''})" for sid, kind, when, run in self.snapshots)
            or "none"))
        return out


def run_label(run: RunIdentity | None) -> str | None:
    """``<dag>.<task>[<map index>] in run <run id>`` (the map index only for a mapped task), try >1 noted."""
    if run is None:
        return None
    mapped = f"[{run.map_index}]" if run.map_index >= 0 else ""
    tried = f" (try {run.try_number})" if run.try_number > 1 else ""
    return f"{run.dag_id}.{run.task_id}{mapped} in run {run.run_id}{tried}"


def rollback_targets(table: Table, limit: int = RECENT_SNAPSHOTS) -> RollbackTargets:
    """The tags and latest ``limit`` snapshots of an engine ``Table``, with the run that committed each, read when
    a rollback runs (snapshot and tag files only)."""
    from table_engine.run_identity import RunIdentity

    tags = {tag.name: tag.snapshot.id for tag in table.tags()}
    latest, earliest = table.latest_snapshot_id(), table.earliest_snapshot_id()
    snapshots = []
    if latest is not None and earliest is not None:
        for sid in range(latest, max(earliest, latest - limit + 1) - 1, -1):
            snap = table.snapshot(sid)
            when = datetime.datetime.fromtimestamp(snap.time_millis / 1000, datetime.UTC)
            snapshots.append((sid, str(snap.commit_kind), when.strftime("%Y-%m-%d %H:%M:%S"),
                              run_label(RunIdentity.of(snap.properties))))
    return RollbackTargets(tags, snapshots)


@task(task_id="list_snapshots_and_tags")
def show_rollback_targets(table: str, paimon_conn_id: str = DEFAULT_CONN_ID) -> dict[str, Any]:
    """Log the tags and latest snapshots of ``table`` (what a rollback can go to); an unknown table fails here,
    before the rollback. Returns them (XCom) for the UI."""
    import logging

    from paimon_provider.hooks.table import PaimonTableHook

    found = rollback_targets(PaimonTableHook(paimon_conn_id).get_table(table))
    for line in found.lines(table):
        logging.getLogger(__name__).info("%s", line)
    return {"tags": found.tags, "snapshots": [list(s) for s in found.snapshots]}


def match_tables(database: str, names: Sequence[str], include: Sequence[str] | str | None,
                 exclude: Sequence[str] | str | None) -> list[str]:
    """``database.table`` of the ``names`` (tables of ``database``) matching a glob of ``include`` (default: all)
    and none of ``exclude`` (``fnmatch`` globs on the table name, case-sensitive; a string is one glob)."""
    def globs(value: Sequence[str] | str | None) -> list[str]:
        items = [value] if isinstance(value, str) else list(value or ())
        return [str(g).strip() for g in items if str(g).strip()]

    keep, drop = globs(include) or ["*"], globs(exclude)
    return [f"{database}.{n}" for n in names
            if any(fnmatch.fnmatchcase(n, g) for g in keep) and not any(fnmatch.fnmatchcase(n, g) for g in drop)]


@task(task_id="list_tables")
def list_database_tables(paimon_conn_id: str = DEFAULT_CONN_ID, **context: Any) -> list[str]:
    """The tables of the ``databases`` param (empty: every database of the warehouse) matching its ``include`` and
    none of its ``exclude`` globs, listed through the engine's catalog (an unknown database fails here, with the
    catalog's one-line error)."""
    import contextlib
    import logging

    from paimon_provider.hooks.table import PaimonTableHook

    params = context["params"]
    found: list[str] = []
    with contextlib.closing(PaimonTableHook(paimon_conn_id).get_catalog()) as catalog:
        databases = [str(d) for d in params.get("databases") or ()] or catalog.list_databases()
        for database in databases:
            names = catalog.list_tables(database)
            chosen = match_tables(database, names, params.get("include"), params.get("exclude"))
            logging.getLogger(__name__).info("%d of the %d tables of %s selected: %s", len(chosen), len(names),
                                             database, ", ".join(chosen) or "none")
            found += chosen
    return found


@task
def selected_tables(**context: Any) -> list[str]:
    """The tables of this run, read from the ``tables`` param (a real list, not rendered text)."""
    return [str(t) for t in context["params"]["tables"]]


def schedule_words(schedule: str | None) -> str:
    """When a DAG with this ``schedule`` runs, in words for its doc."""
    if schedule is None:
        return "by hand only: trigger it from the UI (its form below)."
    return f"`{schedule}`, and by hand from the UI (its form below; the defaults are those of scheduled runs)."


def upkeep_timetable(schedule: str | None, start_date: datetime.datetime | None) -> Any:
    """The timetable of a scheduled upkeep DAG without a start date: its cron ``schedule`` (UTC) whose first run is
    the next tick after the DAG appears, never the tick just past. Airflow 3.3's ``CronTriggerTimetable`` runs the past
    tick at once when it is less than a tenth of the interval (at least 5 minutes) ago even with ``run_immediately``
    false (its code applies the "None" rule to False), so the buffer is given as zero (ADR 0041). A schedule with a
    start date, or none, is left to Airflow."""
    if schedule is None or start_date is not None or schedule in ("@once", "@continuous"):
        return schedule
    from airflow.sdk import CronTriggerTimetable

    return CronTriggerTimetable(schedule, timezone="UTC", run_immediately=datetime.timedelta(0))


def maintenance_dag(dag_id: str, *, description: str, schedule: str | None, params: Mapping[str, Param],
                    doc_md: str | None = None, leaves: str | None = None, notes: str = "",
                    start_date: datetime.datetime | None = None,
                    default_args: Mapping[str, Any] | None = DEFAULT_ARGS,
                    tags: Sequence[str] = DEFAULT_TAGS) -> DAG:
    """A DAG for one upkeep job: no catch-up, one run at a time, retries, the given form. Given ``leaves`` (what a
    run leaves behind), its ``doc_md`` is :func:`dag_doc` of ``doc_md`` (or the description), the schedule and the
    params. No ``start_date`` by default: a scheduled one then first runs at the next time its schedule names after
    the DAG appears (:func:`upkeep_timetable`), not at once for the time already past, so the first start of an
    Airflow runs no maintenance ahead of its user (ADR 0041)."""
    if leaves is not None:
        doc_md = dag_doc(doc_md or description, when=schedule_words(schedule), leaves=leaves, params=params,
                         notes=notes)
    return DAG(dag_id=dag_id, description=description, schedule=upkeep_timetable(schedule, start_date),
               start_date=start_date, catchup=False,
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


def from_form(params: Mapping[str, Param], *, skip: Sequence[str] = ("table", "tables"),
              **renamed: str) -> dict[str, Any]:
    """An operator's keyword arguments from a form: each field ``name`` of ``params`` (but ``skip``) templated as
    ``{{ params.name }}``, under its own name or the one ``renamed`` gives (``dry_run="dry_run_only"``), so that a
    form field and the argument it feeds are named once."""
    return {renamed.get(name, name): f"{{{{ params.{name} }}}}" for name in params if name not in skip}
