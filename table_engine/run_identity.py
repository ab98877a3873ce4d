"""Which orchestrator run wrote a snapshot: the snapshot ``properties`` keys that name it, decided here once.

Paimon 1.2 added a ``properties`` string map to the snapshot JSON. Every commit a provider operator makes carries
the Airflow run that made it under the keys of :data:`KEYS` (docs/run-identity.md, ADR 0027); the commit user keeps
its exactly-once role. This module imports nothing of Airflow (the engine never does): the provider fills a
:class:`RunIdentity` from its task context, :meth:`RunIdentity.to_properties` gives the map, and
:meth:`RunIdentity.of` reads it back from a snapshot's properties.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DAG_ID", "KEYS", "MAP_INDEX", "PREFIX", "RUN_ID", "RunIdentity", "TASK_ID", "TRY_NUMBER"]

PREFIX = "airflow."
"""The namespace of the run identity keys (a user's own snapshot properties must not use it through the provider)."""
DAG_ID = PREFIX + "dag-id"
RUN_ID = PREFIX + "run-id"
TASK_ID = PREFIX + "task-id"
MAP_INDEX = PREFIX + "map-index"
TRY_NUMBER = PREFIX + "try-number"
KEYS = (DAG_ID, RUN_ID, TASK_ID, MAP_INDEX, TRY_NUMBER)
"""Every run identity key, in the order :meth:`RunIdentity.to_properties` writes them."""


@dataclass(frozen=True)
class RunIdentity:
    """The Airflow task try that committed a snapshot: DAG, DAG run, task, map index (-1: not mapped, as Airflow
    says) and try number (the try that committed; a retry that finds the commit done commits nothing)."""

    dag_id: str
    run_id: str
    task_id: str
    map_index: int = -1
    try_number: int = 1

    def to_properties(self) -> dict[str, str]:
        """The snapshot properties that record this run (:data:`KEYS`)."""
        return {DAG_ID: self.dag_id, RUN_ID: self.run_id, TASK_ID: self.task_id, MAP_INDEX: str(self.map_index),
                TRY_NUMBER: str(self.try_number)}

    @classmethod
    def of(cls, properties: Mapping[str, str] | None) -> RunIdentity | None:
        """The run recorded in a snapshot's ``properties``; None when it names no run (no DAG, run and task id).
        A map index or try number that is not an integer reads as the default (written by someone else)."""
        props = properties or {}
        dag_id, run_id, task_id = props.get(DAG_ID), props.get(RUN_ID), props.get(TASK_ID)
        if not dag_id or not run_id or not task_id:
            return None
        return cls(dag_id, run_id, task_id, _int(props.get(MAP_INDEX), -1), _int(props.get(TRY_NUMBER), 1))


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default
