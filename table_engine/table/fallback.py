"""``scan.fallback-branch`` (Paimon's ``FallbackReadFileStoreTable``): a batch read of the latest snapshot takes the
partitions its branch lacks from the fallback branch.

The partitions the branch's (filtered) plan has are complete; the fallback branch's splits of every other partition
are read with the fallback branch's own reader (its schemas, its snapshot), and the rows appended. Both branches must
have the same columns (nullability aside) and primary keys, as in Paimon.

Batch reads that travel (a snapshot id, a tag, a time, or the ``scan.*`` / ``incremental-between*`` options that
choose them) travel the fallback branch too, as Paimon's ``rewriteOtherOptions`` does: a snapshot id of this branch
becomes the fallback's latest snapshot at or before that snapshot's time (its first snapshot, id 1, when it has none
that early); a tag and a time are looked up in the fallback branch as given; the bucket number is the fallback's
own. Incremental reads take the fallback's changes of the partitions this branch's changes lack (the engine's
reads; Spark's incremental reads of such a table are refused, not read half). Streaming scans
and changelog consumers read the branch alone (Paimon's stream scan is not a fallback scan). Spark's reads plan
with ``Table.plan_with_fallback`` (each split with the branch it is read from); ``plan`` alone refuses such a table
rather than return splits of two branches without saying which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from table_engine.core_options import (
    INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_SCAN_MODE,
    INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT,
    INCREMENTAL_BETWEEN_TIMESTAMP,
    SCAN_BOUNDED_WATERMARK,
    SCAN_FALLBACK_BRANCH,
    SCAN_MODE,
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_TIMESTAMP,
    SCAN_TIMESTAMP_MILLIS,
)
from table_engine.errors import OptionError
from table_engine.format.snapshot import FIRST_SNAPSHOT_ID, latest_snapshot_id, snapshot_at_or_before_time
from table_engine.io.paths import branch_of

if TYPE_CHECKING:
    from table_engine.table import Table

TRAVEL_OPTIONS = (SCAN_MODE, SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP,
                  SCAN_BOUNDED_WATERMARK, INCREMENTAL_BETWEEN, INCREMENTAL_BETWEEN_TIMESTAMP,
                  INCREMENTAL_BETWEEN_SCAN_MODE, INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT)
"""The options that choose what a batch read of this branch reads; the fallback branch reads with them too."""


@dataclass(frozen=True)
class FallbackRead:
    """How the fallback branch is read alongside a read of its table: ``table`` (the fallback branch with the
    read's travel options) and the snapshot id, tag and time it reads (None: what its options select)."""

    table: Table
    snapshot_id: int | None = None
    tag: str | None = None
    timestamp_millis: int | None = None

    @property
    def args(self) -> tuple[int | None, str | None, int | None]:
        """``(snapshot_id, tag, timestamp_millis)`` for the fallback's plan and read."""
        return self.snapshot_id, self.tag, self.timestamp_millis

    @property
    def branch(self) -> str:
        """The fallback branch's name."""
        return branch_of(self.table.path)


def fallback_read(table: Table, snapshot_id: int | None, tag: str | None,
                  timestamp_millis: int | None) -> FallbackRead | None:
    """The fallback branch's part of a batch read of ``table`` at ``snapshot_id`` / ``tag`` / ``timestamp_millis``
    (or what its travel options select); None when ``table`` has no fallback branch or it has no snapshot yet."""
    fallback = fallback_table(table)
    if fallback is None or latest_snapshot_id(fallback.file_io, fallback.path) is None:
        return None
    travel = {k: v for option in TRAVEL_OPTIONS for k in option.keys if (v := table.options.raw.get(k)) is not None}
    option_sid = table.options.get(SCAN_SNAPSHOT_ID)
    if option_sid is not None:
        for k in SCAN_SNAPSHOT_ID.keys:
            travel.pop(k, None)
        travel[SCAN_SNAPSHOT_ID.key] = str(_their_snapshot(table, fallback, option_sid))
    if travel:
        fallback = fallback.copy(travel)
    if snapshot_id is not None:
        return FallbackRead(fallback, snapshot_id=_their_snapshot(table, fallback, snapshot_id))
    return FallbackRead(fallback, tag=tag, timestamp_millis=timestamp_millis)


def _their_snapshot(table: Table, fallback: Table, snapshot_id: int) -> int:
    """The fallback's snapshot for ``table``'s snapshot ``snapshot_id``: its latest at or before that snapshot's
    time, else its first (Paimon's ``rewriteOtherOptions``)."""
    millis = table.snapshot(snapshot_id).time_millis
    theirs = snapshot_at_or_before_time(fallback.file_io, fallback.path, millis)
    return FIRST_SNAPSHOT_ID if theirs is None else theirs.id


def fallback_table(table: Table) -> Table | None:
    """The fallback branch of ``table`` for a batch read (None: no ``scan.fallback-branch``, or it names the
    table's own branch); OptionError when the branches differ in columns or primary keys."""
    name = table.options.get(SCAN_FALLBACK_BRANCH)
    if not name or table.source is not None or name == branch_of(table.path):
        return None
    fallback = table.branch_table(name)
    mine = [(f.name, f.type) for f in table.schema.arrow_schema()]
    theirs = [(f.name, f.type) for f in fallback.schema.arrow_schema()]
    if mine != theirs:
        raise OptionError(f"{SCAN_FALLBACK_BRANCH.key} = {name!r}: branch {branch_of(table.path)} and {name} do "
                          f"not have the same row type ({mine} vs {theirs})")
    if table.primary_keys and table.primary_keys != fallback.primary_keys:
        raise OptionError(f"{SCAN_FALLBACK_BRANCH.key} = {name!r}: primary keys {table.primary_keys} of branch "
                          f"{branch_of(table.path)} differ from {fallback.primary_keys} of {name}")
    return fallback
