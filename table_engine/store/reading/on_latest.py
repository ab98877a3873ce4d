"""Read the latest snapshot's metadata while expiry runs beside: plan again when the snapshot vanished under the read.

A maintenance job (dedicated compaction, partition expiry, ``drop_partitions``) plans from the latest snapshot
without pinning it: a concurrent expiry that retains one snapshot may remove it, and the manifests only it
referenced, while they are read. That is no damage - the job would conflict at commit anyway - so the read is done
again on the new latest snapshot. A file missing from a snapshot that still exists is damage, and fails as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from table_engine.errors import MissingFileError
from table_engine.format.snapshot import Snapshot, snapshot_path
from table_engine.store.context import StoreContext

log = logging.getLogger(__name__)

T = TypeVar("T")

EXPIRED_PLAN_ATTEMPTS = 5
"""How many times a plan is read when concurrent expiries keep removing the snapshot it reads."""


def on_latest(ctx: StoreContext, read: Callable[[Snapshot | None], T], what: str) -> T:
    """``read(latest snapshot)``, again on the new latest when the one it read expired meanwhile (a
    :class:`MissingFileError` while its ``snapshot-<id>`` is gone), at most :data:`EXPIRED_PLAN_ATTEMPTS` times."""
    for attempt in range(1, EXPIRED_PLAN_ATTEMPTS + 1):
        planned = ctx.latest_snapshot()
        try:
            return read(planned)
        except MissingFileError as e:
            if planned is None or attempt == EXPIRED_PLAN_ATTEMPTS \
                    or ctx.file_io.exists(snapshot_path(ctx.table_path, planned.id)):
                raise
            log.warning("%s: snapshot %d expired while %s read it (%s); reading the latest snapshot again",
                        ctx.table_path, planned.id, what, e)
    raise AssertionError("unreachable")  # pragma: no cover
