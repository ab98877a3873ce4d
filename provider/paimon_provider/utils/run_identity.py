"""The Airflow run on every snapshot an operator commits (issue 27, docs/run-identity.md, ADR 0027).

Each command whose run commits snapshots (:func:`table_engine.ops.committing_commands`) gets the task try's
:class:`~table_engine.run_identity.RunIdentity` as snapshot properties (``airflow.dag-id``, ``airflow.run-id``,
``airflow.task-id``, ``airflow.map-index``, ``airflow.try-number``), merged with the operator's own
``snapshot_properties``. The ``airflow.`` keys are the provider's: a user property under that prefix is refused (a
run cannot claim to be another), as is ``snapshot_properties`` on an operator whose command commits no snapshot; both
when the task runs (its arguments are invalid: not retried), since DAG files load nothing of the engine. The commit
user keeps its exactly-once role: a retry that finds the earlier try's commit commits nothing, so the snapshot keeps
the try number of the try that committed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow.sdk import Context

    from table_engine.ops import Command
    from table_engine.run_identity import RunIdentity

__all__ = ["run_identity", "with_run_identity"]


def run_identity(context: Context) -> RunIdentity:
    """The task try of ``context``: its DAG, DAG run, task, map index (-1 when not mapped) and try number."""
    from table_engine.run_identity import RunIdentity

    ti = context["ti"]
    map_index = getattr(ti, "map_index", -1)
    try_number = getattr(ti, "try_number", 1)
    return RunIdentity(str(ti.dag_id), str(ti.run_id), str(ti.task_id),
                       map_index if isinstance(map_index, int) else -1,
                       try_number if isinstance(try_number, int) else 1)


def with_run_identity(cmd: Command, properties: Mapping[str, Any], run: RunIdentity | None) -> Command:
    """``cmd`` with the operator's ``properties`` (rendered) and ``run``'s identity as its snapshot properties when
    it commits snapshots (any other command as it is). A ValueError naming the problem: ``properties`` on a command
    that commits no snapshot, a key of the provider's ``airflow.`` namespace, a value that is not a string (the
    command's CommandError)."""
    from table_engine.ops import CommittingCommand
    from table_engine.run_identity import PREFIX

    if properties and not isinstance(cmd, CommittingCommand):
        raise ValueError(f"snapshot_properties: {cmd.name} commits no snapshot")
    reserved = sorted(str(k) for k in properties if str(k).startswith(PREFIX))
    if reserved:
        raise ValueError(f"snapshot_properties {reserved}: keys starting with {PREFIX!r} are the run identity the "
                         "provider writes itself")
    if not isinstance(cmd, CommittingCommand) or (not properties and run is None):
        return cmd
    merged = {**cmd.snapshot_properties, **properties, **(run.to_properties() if run is not None else {})}
    return dataclasses.replace(cmd, snapshot_properties=merged)
