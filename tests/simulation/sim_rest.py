"""A REST catalog's commit endpoint in the simulation (``rest`` scenarios, ADR 0045).

With ``metastore=rest`` the engine does not create ``snapshot-<id>`` itself: :class:`BasePin.publish
<table_engine.store.pins.BasePin>` hands the snapshot and its base to the catalog's
:class:`~table_engine.catalog.rest.catalog.RestSnapshotCommit`, which posts it to the server. Here the real
``RestSnapshotCommit`` talks to :class:`SimRestServer`, which commits as ``tests/rest_server.py`` does (and as the
spec's ``CommitTableResponse`` describes): the base snapshot's uuid must be the server's latest, then
``snapshot-<id>`` is created exclusively, then the hints; else ``success: false``. The server is one process that
serializes its commits (a database transaction in a real service): the request is one scheduling point and the
commit is applied at once on the raw store, where the actors cannot interleave with it.

Faults (seeded, replayable): a request may fail before the server applies it (a 503: the client reads the snapshot
back and finds nothing, so the outcome is unknown and the files are kept) or after (the answer is lost: the client
reads back its own snapshot, or another's). Each is recorded as an injected fault of the actor, so the error the
actor then sees is tolerated, and its rows are not counted as acknowledged.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from table_engine.catalog.filesystem import Catalog
from table_engine.catalog.identifiers import parse_identifier
from table_engine.catalog.rest import messages
from table_engine.catalog.rest.client import RestConnectionError, RestResponseError
from table_engine.catalog.rest.table import RestSnapshotCommit
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import Snapshot, find_latest_snapshot, try_publish_snapshot
from table_engine.io.file_io import FileIO
from table_engine.table import Table
from table_engine.table.hooks import TableHooks
from tests.simulation.mem_io import MemFileIO
from tests.simulation.scheduler import Scheduler


@dataclass
class SimRestServer:
    """The commit endpoint of a REST server over the raw store (see the module). ``fault_rate``: the share of
    requests that fail, half before and half after the commit is applied."""

    raw: MemFileIO
    sched: Scheduler
    seed: int = 0
    fault_rate: float = 0.0
    latest_uuid: dict[str, str | None] = field(default_factory=dict)
    """The uuid of each table's latest snapshot as the server knows it (it saw every commit since the table was
    registered: :meth:`register`)."""
    commits: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed ^ 0x7E57)

    def register(self, table_path: str) -> None:
        """Start serving ``table_path`` at its current latest snapshot (created before the run)."""
        snap = find_latest_snapshot(self.raw, table_path)
        self.latest_uuid[table_path] = None if snap is None else snap.uuid

    def commit_snapshot(self, ident: messages.Identifier, table_id: str | None, base_snapshot_uuid: str | None,
                        snapshot: dict[str, Any], statistics: list[Any]) -> bool:
        path = str(table_id)
        self.sched.point("rest-commit", f"{path}/snapshot-{snapshot['id']}")
        fault = self._decide()
        if fault == "error":
            self.sched.fault("error", "rest-commit", path)
            raise RestResponseError("POST", f"/v1/tables/{ident.object}/commit", 503, "injected: unavailable")
        ok = self._apply(path, base_snapshot_uuid, snapshot)
        if fault == "lost":
            self.sched.fault("lost", "rest-commit", path)
            raise RestConnectionError(f"POST .../commit: the answer was lost (injected; the commit {ok=})", sent=True)
        return ok

    def _decide(self) -> str | None:
        if self.fault_rate <= 0 or self._rng.random() >= self.fault_rate:
            return None
        return "error" if self._rng.random() < 0.5 else "lost"

    def _apply(self, path: str, base_uuid: str | None, body: dict[str, Any]) -> bool:
        if base_uuid != self.latest_uuid.get(path):
            return False
        snap = Snapshot.from_json(json.dumps(body), f"{path}/snapshot/snapshot-{body['id']} (posted)")
        if not try_publish_snapshot(self.raw, path, snap):
            return False
        self.latest_uuid[path] = snap.uuid
        self.commits += 1
        return True


class SimRestCatalog(Catalog):
    """A filesystem catalog over the simulated store whose tables commit their snapshots through ``server`` with
    the engine's real :class:`RestSnapshotCommit` (its read-back of a lost answer included); the server's table id
    is the table's path."""

    def __init__(self, warehouse: str, server: SimRestServer, file_io: FileIO) -> None:
        self.server = server
        super().__init__(warehouse, None, file_io)

    def _open(self, db: str, path: str, identifier: str, schema: TableSchema) -> Table:
        ident = messages.Identifier(*parse_identifier(identifier))
        commit = RestSnapshotCommit(self.server, ident, path, self.file_io, path)  # type: ignore[arg-type]
        return Table(self.file_io, path, identifier, schema, hooks=TableHooks(snapshot_commit=commit))
