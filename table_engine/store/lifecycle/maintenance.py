"""Commit-time maintenance: what Paimon writers do after each successful commit unless ``write-only``.

In Paimon's order (``TableCommitImpl.maintain``): automatic tag creation, tag expiry by time-retained
(``tag.time-expire-enabled``), partition expiry (every ``partition.expiration-check-interval``), consumer expiry
(``consumer.expiration-time``, before snapshots so expired consumers no longer hold them), snapshot expiry (and
decoupled changelog expiry) last, as it takes longest.

Cost when nothing is due: a handful of small reads (LATEST/EARLIEST hints, the tag and consumer directory
listings, at most a snapshot file or two) -- no manifest is read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from table_engine import clock
from table_engine.core_enums import TagCreationMode
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.expire import ExpireResult, expire_snapshots
from table_engine.store.lifecycle.partition_expire import commit_time_check_due, expire_partitions
from table_engine.store.lifecycle.tag_creation import TagAutoCreation, create_batch_tag
from table_engine.store.lifecycle.tags import TagManager

__all__ = ["MaintenanceReport", "run_commit_maintenance"]

log = logging.getLogger(__name__)


@dataclass
class MaintenanceReport:
    """What one maintenance run did: tags created and expired, partitions, consumers and snapshots expired."""

    tags_created: list[str] = field(default_factory=list)
    tags_expired: list[str] = field(default_factory=list)
    partitions_expired: list[dict[str, str]] = field(default_factory=list)
    consumers_expired: list[str] = field(default_factory=list)
    snapshots: ExpireResult | None = None


def run_commit_maintenance(ctx: StoreContext, commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
                           now_millis: int | None = None) -> MaintenanceReport:
    """Run the maintenance a committer owes the table (nothing with ``write-only``)."""
    opts = ctx.options
    report = MaintenanceReport()
    if opts.write_only():
        return report
    now = clock.now_millis() if now_millis is None else now_millis
    mode = opts.tag_automatic_creation()
    if mode in (TagCreationMode.PROCESS_TIME, TagCreationMode.WATERMARK):
        report.tags_created = TagAutoCreation(ctx).run()
    elif mode is TagCreationMode.BATCH and commit_identifier == BATCH_COMMIT_IDENTIFIER:
        name = create_batch_tag(ctx)
        report.tags_created = [name] if name else []
    if opts.tag_time_expire_enabled() and ctx.file_io.list_status(f"{ctx.table_path}/tag"):
        report.tags_expired = TagManager(ctx).expire(now=clock.local_datetime(now)).deleted_tags
    if commit_time_check_due(ctx, commit_identifier, now):
        report.partitions_expired = expire_partitions(ctx, now=clock.local_datetime(now)).partitions
    expiration = opts.consumer_expiration_time()
    if expiration is not None:
        report.consumers_expired = ConsumerManager(ctx.file_io, ctx.table_path).expire(now - expiration)
    report.snapshots = expire_snapshots(ctx, now_millis=now)
    return report
