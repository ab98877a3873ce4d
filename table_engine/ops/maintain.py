"""The ``maintain`` command: plan the maintenance due on a table (from its health and options, metadata only) and run
the due actions in the plan's order through the commands of those names (their ``local`` runners: the same code paths
as ``compact``, ``expire-snapshots``, ...). Also the readable form of a plan and its results (:func:`render_plan`),
which the CLI and :class:`PaimonMaintenanceOperator` print."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from table_engine import clock
from table_engine.ops.base import Command, entry
from table_engine.ops.commands import (
    Compact,
    CompactManifest,
    ExpireChangelogs,
    ExpirePartitions,
    ExpireSnapshots,
    ExpireTags,
    Maintain,
    RemoveOrphanFiles,
    snapshot_properties_of,
)
from table_engine.store.committing.scoped_properties import snapshot_properties_scope

if TYPE_CHECKING:
    from table_engine.catalog import Catalog
    from table_engine.store.lifecycle.health import TableHealth
    from table_engine.store.lifecycle.planner import Action, Plan
    from table_engine.table import Table

__all__ = ["MAINTAIN_ACTION", "maintain", "plan_table", "render_plan"]

MAINTAIN_ACTION = "maintain.action"
"""The snapshot property a ``maintain`` run adds to each snapshot an action of it commits (compaction, partition
expiry, manifest compaction): the action's kind. With the run identity (:mod:`table_engine.run_identity`) it tells which
Airflow run last maintained a table (the table page of the UI shows it)."""

log = logging.getLogger("table_engine.cli")


def plan_table(table: Table, orphans: bool | None = None, health: TableHealth | None = None) -> Plan:
    """The maintenance due on ``table`` now: its health (with orphans when ``orphans`` or the table option
    ``maintenance.remove-orphan-files.enabled`` says so; ``health`` when the caller computed it already), dry runs
    of partition expiry (with ``partition.expiration-time`` set) and of manifest compaction, planned. Reads
    metadata only. The one plan: ``maintain`` runs it, the table page shows it."""
    from table_engine.core_options import (
        MAINTENANCE_ORPHANS_ENABLED,
        MAINTENANCE_ORPHANS_OLDER_THAN,
        PARTITION_EXPIRATION_TIME,
    )
    from table_engine.store.lifecycle.planner import ManifestState, plan_maintenance, sort_columns

    opts = table.options
    with_orphans = bool(orphans) or opts.get(MAINTENANCE_ORPHANS_ENABLED)
    now = clock.now_millis()
    if health is None:
        health = table.maintenance.health(orphans=with_orphans,
                              orphans_older_than_millis=now - opts.get(MAINTENANCE_ORPHANS_OLDER_THAN))
    expired: list[str] = []
    if health.snapshot_id is not None and opts.get(PARTITION_EXPIRATION_TIME) and table.schema.partition_keys:
        found = table.maintenance.expire_partitions(dry_run=True).partitions
        expired = ["/".join(f"{k}={v}" for k, v in p.items()) for p in found]
    manifests = None
    if health.snapshot_id is not None:
        m = table.maintenance.compact_manifest(dry_run=True)
        manifests = ManifestState(m.manifests_before, m.small_manifests, m.delete_entries)
    overlaps = []
    columns = sort_columns(opts, table.schema.primary_keys)
    if health.snapshot_id is not None and columns:  # a sort compaction may be due: how files overlap on the column
        overlaps = table.maintenance.overlap(columns[0])
    return plan_maintenance(health, opts, expired_partitions=expired, manifests=manifests, overlaps=overlaps)


def maintain(cmd: Maintain, catalog: Catalog) -> dict[str, Any]:
    """Run ``cmd``: the plan, then (without ``dry_run``) each action's command; the plan and the results."""
    table = catalog.get_table(cmd.table)
    plan = plan_table(table, cmd.orphans)
    results: list[dict[str, Any]] = []
    if not cmd.dry_run:
        for action in plan.actions:
            first, last = table.earliest_snapshot_id(), table.latest_snapshot_id()
            sub = action_command(action, cmd, 0 if first is None or last is None else last - first + 1)
            local = entry(type(sub), "local").local
            assert local is not None
            log.info("%s: %s (%s)", cmd.table, action.kind, action.reason)
            try:
                with snapshot_properties_scope(snapshot_properties_of(sub)):  # the action's kind on its snapshots
                    out = local(sub, catalog)
            except Exception:  # the job fails with this action's error; the log says what was done before it
                log.error("%s: %s failed after %s", cmd.table, action.kind,
                          ", ".join(r["kind"] for r in results) or "no other action")
                raise
            results.append({"kind": action.kind, "command": sub.to_dict(), "result": out})
    return {"snapshot_id": table.latest_snapshot_id(), "planned_at_snapshot": plan.snapshot_id,
            "dry_run": cmd.dry_run, "due": [a.kind for a in plan.actions], "plan": plan.to_dict(),
            "results": results}


def action_command(action: Action, cmd: Maintain, snapshots: int) -> Command:
    """The command that runs ``action`` on ``cmd``'s table (``snapshots``: how many the table has now, the most a
    snapshot expiry may delete: it expires all that are due, not ``snapshot.expire.limit`` of them)."""
    base: dict[str, Any] = {"warehouse": cmd.warehouse, "table": cmd.table, "catalog_options": cmd.catalog_options}
    kind = action.kind
    properties = {**cmd.snapshot_properties, MAINTAIN_ACTION: kind}
    committing = {**base, "snapshot_properties": properties, "commit_user": cmd.commit_user}
    if kind == "compact":
        return Compact(**committing, full=action.full, partitions=tuple(_spec(p) for p in action.partitions),
                       order_strategy=action.order_strategy, order_by=tuple(action.order_by))
    if kind == "expire-partitions":
        return ExpirePartitions(**base, snapshot_properties=properties,
                                max_expires=max(1, len(action.partitions)))
    if kind == "compact-manifest":
        return CompactManifest(**committing)
    if kind == "expire-snapshots":
        return ExpireSnapshots(**base, max_deletes=max(1, snapshots))
    if kind == "expire-changelogs":
        return ExpireChangelogs(**base, max_deletes=max(1, action.count or 1))
    if kind == "expire-tags":
        return ExpireTags(**base)
    if kind == "remove-orphan-files":
        return RemoveOrphanFiles(**base, older_than_millis=_orphans_cutoff(action))
    raise ValueError(f"unknown maintenance action {kind!r}")


def _spec(text: str) -> dict[str, str]:
    """``k=v/k2=v2`` as a partition spec."""
    return dict(part.split("=", 1) for part in text.split("/"))


def _orphans_cutoff(action: Action) -> int | None:
    """The cutoff the plan listed orphans with (in its reason's measured values: the health's ``older_than``)."""
    return int(action.threshold) if action.threshold else None


# ---- the readable form ---------------------------------------------------------------------------------------------
def render_plan(fields: Mapping[str, Any]) -> str:
    """A ``maintain`` result as an aligned table: one row per planned action, its reason, estimate and outcome."""
    plan = fields["plan"]
    actions: Sequence[Mapping[str, Any]] = plan["actions"]
    head = (f"maintenance of {plan['table']} at snapshot {plan['snapshot_id']}: "
            + (f"{len(actions)} actions due" if actions else "nothing due")
            + (" (dry run)" if fields.get("dry_run") else ""))
    if not actions:
        return head
    results = dict(enumerate(fields.get("results") or []))
    rows = [("#", "action", "target", "estimated bytes", "outcome", "reason")]
    for i, a in enumerate(actions):
        target = action_target(a)
        est = a.get("estimated_bytes")
        rows.append((str(i + 1), a["kind"], target, "?" if est is None else str(est),
                     _outcome(results.get(i), a.get("count")) if not fields.get("dry_run") else "planned",
                     a["reason"]))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    lines = [head]
    for r in rows:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
    return "\n".join(lines)


_OUTCOMES = (("expired_snapshots", "expired", "snapshot"), ("expired_changelogs", "expired", "changelog"),
             ("expired_tags", "expired", "tag"), ("expired_partitions", "expired", "partition"),
             ("orphan_files", "deleted", "orphan file"))
"""Each counting action's result key and its outcome's words."""


def action_target(a: Mapping[str, Any]) -> str:
    """What an action (its ``to_dict``) works on, in a few words: ``full dt=1, dt=2``, ``zorder(a, b) all``, ``3``."""
    if a["kind"] in ("compact", "expire-partitions"):
        how = f"{a['order_strategy']}({', '.join(a.get('order_by') or ())}) " if a.get("order_strategy") else \
            ("full " if a.get("full") else "")
        return how + (", ".join(a["partitions"]) or "all")
    return str(a["count"]) if a.get("count") else ""


def _outcome(result: Mapping[str, Any] | None, planned: int | None = None) -> str:
    """What an action did, in words; a count other than the planned one says why they differ."""
    if result is None:
        return "not run"
    r = result.get("result") or {}
    for key, verb, noun in _OUTCOMES:
        if key in r:
            v = r[key]
            n = len(v) if isinstance(v, list) else int(v or 0)
            text = f"{verb} {n} {noun if n == 1 else noun + 's'}"
            if planned is not None and n != planned:
                text += f" ({planned} when planned: commits since, this run's among them, changed what was due)"
            return text
    if "snapshot_id" in r:
        return "nothing to commit" if r["snapshot_id"] is None else f"snapshot {r['snapshot_id']}"
    return "done"
