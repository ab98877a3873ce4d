"""The body of a table page: health, the last maintenance plan and run, snapshots (their rate and the runs that wrote
them), tags, branches, consumers and partitions, all read through the engine's public API
(``table.maintenance.health()``, ``snapshots()``, ``branches()``, the maintenance planner)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from paimon_provider.plugins import render
from paimon_provider.plugins.maintenance_view import (
    last_maintained,
    last_maintained_section,
    layout_section,
    plan_section,
    rate_section,
)
from paimon_provider.plugins.render import esc, millis, url
from table_engine.options import format_duration
from table_engine.run_identity import RunIdentity
from table_engine.store.lifecycle.planner import compaction_triggers

if TYPE_CHECKING:
    from table_engine import Snapshot, TableHealth
    from table_engine.catalog import Catalog
    from table_engine.core_options import CoreOptions
    from table_engine.ops.history import Commit
    from table_engine.table import Table

MAX_SNAPSHOTS = 50
"""Snapshots listed, newest first."""
MAX_CHART_BARS = 40
"""Buckets charted at most (the worst by sorted runs, then files)."""


def run_link(snapshot: Snapshot, airflow_root: str, known: Callable[[str, str], bool] = lambda d, r: True) -> str:
    """A link to the Airflow run that committed ``snapshot`` (from its properties), or a dash; a run this Airflow
    does not have (``known`` says no: another Airflow, or ``make demo``'s own database) is named, not linked."""
    return identity_link(RunIdentity.of(snapshot.properties), airflow_root, known)


def identity_link(run: RunIdentity | None, airflow_root: str,
                  known: Callable[[str, str], bool] = lambda d, r: True) -> str:
    """:func:`run_link` of a run identity (None: a dash)."""
    if run is None:
        return "\u2014"
    text = f"{esc(run.dag_id)} / {esc(run.run_id)}"
    if not known(run.dag_id, run.run_id):
        return f"{text} <span class='muted'>{esc(run.task_id)} (not a run of this Airflow)</span>"
    href = f"{airflow_root}/{url('dags', run.dag_id, 'runs', run.run_id)}"
    return f"{render.airflow_link(href, text)} <span class='muted'>{esc(run.task_id)}</span>"


def _identity(c: Commit) -> RunIdentity | None:
    if c.dag_id is None or c.run_id is None or c.task_id is None:
        return None
    return RunIdentity(c.dag_id, c.run_id, c.task_id, -1 if c.map_index is None else c.map_index,
                       1 if c.try_number is None else c.try_number)


def history_links(root: str, conn_id: str, table: Table, kind: str | None, older: int | None) -> str:
    """The Snapshots section's filters (every commit kind) and its link to the next, older page."""
    from urllib.parse import urlencode

    from table_engine import CommitKind

    database, name = table.identifier.split(".", 1)
    here = f"{root}/{url(conn_id, database, name)}"
    kinds = [("all", None), *((k.value, k.value) for k in CommitKind)]
    shown = [esc(label) if value == kind else f"<a href='{here}{'?' + urlencode({'kind': value}) if value else ''}'>"
             f"{esc(label)}</a>" for label, value in kinds]
    parts = " &middot; ".join(shown)
    if older is not None:
        query = urlencode({**({"kind": kind} if kind else {}), "before": older})
        parts += f" &middot; <a href='{here}?{query}'>older &rarr;</a>"
    return f"<p class='muted'>{parts}</p>"


def local_time(value: datetime.datetime | str | None) -> str | None:
    """A tag's or branch's creation time (Paimon stores the writer's local wall clock, no zone) in the page's one
    timestamp form, ``YYYY-MM-DD HH:MM:SS``."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(value)
        except ValueError:
            return value
        return parsed.strftime("%Y-%m-%d %H:%M:%S")
    return value.strftime("%Y-%m-%d %H:%M:%S")


def files_per_level(catalog: Catalog, identifier: str) -> list[tuple[int, int, int]]:
    """(level, files, bytes) of the latest snapshot, from the table's ``$files`` system table (metadata only)."""
    files = catalog.get_table(f"{identifier}$files").read(columns=["level", "file_size_in_bytes"])
    by_level = files.group_by("level").aggregate([("level", "count"), ("file_size_in_bytes", "sum")])
    rows = zip(by_level["level"].to_pylist(), by_level["level_count"].to_pylist(),
               by_level["file_size_in_bytes_sum"].to_pylist(), strict=True)
    return sorted((int(level), int(n), int(size or 0)) for level, n, size in rows)


def levels_section(levels: list[tuple[int, int, int]]) -> str:
    """The files-per-level chart (bars: files; the label says their size)."""
    labels = [f"level {level} ({render.size(size)})" for level, _, size in levels]
    return "<h2>Files per level</h2>" + (render.stacked_bars("files per level", labels,
                                                             [("files", [n for _, n, _ in levels])])
                                         or "<p class='muted'>no file</p>")


def health_section(h: TableHealth, options: CoreOptions) -> str:
    """Figures of the latest snapshot, its compaction triggers as the planner weighs them (the worst bucket against
    the threshold: the same rule the plan below applies), and the files-per-bucket chart."""
    triggers = [(t.what, esc(t.text())) for t in compaction_triggers(h, options)]
    figures = [("snapshot", esc(h.snapshot_id)), ("rows", esc(h.rows)), ("files", esc(h.files)),
               ("size", esc(render.size(h.bytes))), ("level-0 files", esc(h.level0_files)), *triggers,
               ("snapshots", f"{h.snapshots.count} (expirable {h.snapshots.expirable})"),
               ("last compaction", esc(millis(h.last_compaction.time_millis) if h.last_compaction else None))]
    buckets = sorted(h.buckets, key=lambda b: (-b.sorted_runs, -b.files, b.partition, b.bucket))[:MAX_CHART_BARS]
    labels = [f"{b.partition or '(unpartitioned)'} #{b.bucket}" for b in buckets]
    chart = render.stacked_bars(
        "files per bucket by level", labels,
        [("level 0", [b.level0_files for b in buckets]),
         ("higher levels", [b.files - b.level0_files - b.postpone_files for b in buckets]),
         ("postpone", [b.postpone_files for b in buckets])])
    note = (f"<p class='muted'>the {MAX_CHART_BARS} buckets with the most sorted runs of {len(h.buckets)}</p>"
            if len(h.buckets) > MAX_CHART_BARS else "")
    return f"<h2>Health</h2>{render.cards(figures)}<h2>Files per bucket</h2>{chart}{note}"


def table_body(catalog: Catalog, table: Table, conn_id: str, airflow_root: str, root: str,
               known_runs: Callable[[Sequence[tuple[str, str]]], set[tuple[str, str]]] | None = None,
               asset_id: int | None = None, kind: str | None = None, before: int | None = None) -> str:
    """The page body of ``table`` of ``catalog`` (read through ``conn_id``); ``known_runs`` gives which of the
    ``(dag_id, run_id)`` pairs are runs of this Airflow (default: all); ``asset_id``, the table's Asset in this
    Airflow (linked), if it has one."""
    h = table.maintenance.health()
    levels = files_per_level(catalog, table.identifier)
    from table_engine.ops.history import history

    retained = list(table.snapshots())
    page = history(table, kinds=[kind] if kind else (), before_snapshot=before, limit=MAX_SNAPSHOTS)
    commits = [(c, _identity(c)) for c in page.commits]
    maintained = last_maintained(retained)
    pairs = [(r.dag_id, r.run_id) for r in [*(i for _, i in commits),
                                            *([RunIdentity.of(maintained.properties)] if maintained else [])]
             if r is not None]
    existing = set(pairs) if known_runs is None else known_runs(pairs)

    def link(s: Snapshot) -> str:
        return run_link(s, airflow_root, lambda d, r: (d, r) in existing)

    snapshot_rows = [[esc(c.snapshot_id), esc(c.commit_kind), esc(c.total_records), esc(c.delta_records),
                      esc(millis(c.time_millis)), render.shortened(c.commit_user),
                      identity_link(run, airflow_root, lambda d, r: (d, r) in existing)] for c, run in commits]
    tag_rows = [[esc(t.name), esc(t.snapshot_id), esc(local_time(t.create_time)),
                 esc(None if t.time_retained_millis is None else format_duration(t.time_retained_millis)),
                 "yes" if t.expired else "no"] for t in h.tags]
    branch_rows = [[esc(b.branch_name), esc(local_time(b.create_time))] for b in table.branches()]
    consumer_rows = [[esc(c.consumer_id), esc(c.next_snapshot_id), esc(c.lag), "yes" if c.expired else "no"]
                     for c in h.consumers]
    partition_rows = [[esc(p.partition or "(unpartitioned)"), esc(p.buckets), esc(p.files), esc(p.rows),
                       esc(render.size(p.bytes)), esc(p.level0_files), esc(p.max_sorted_runs), esc(p.small_files),
                       f"{p.deletion_vector_ratio:.1%}", esc(p.postpone_files)] for p in h.partitions]
    asset = ("" if asset_id is None else " &middot; " + render.airflow_link(
        f"{airflow_root}/{url('assets', str(asset_id))}", "its Asset in Airflow"))
    return (f"<p><a href='{root}/'>Paimon tables</a> / {esc(conn_id)}{asset}</p>"
            f"<h1>{esc(table.identifier)}</h1>"
            f"<p class='muted'>{'primary-key' if h.primary_key else 'append'} table; health at "
            f"{esc(millis(h.computed_at_millis))} UTC</p>"
            + health_section(h, table.options) + plan_section(table, h)
            + last_maintained_section(maintained, link(maintained) if maintained else "")
            + levels_section(levels) + layout_section(table, retained) + rate_section(retained)
            + f"<h2>Snapshots <span class='muted'>(newest {MAX_SNAPSHOTS}{esc(' ' + kind) if kind else ''}"
            + f"{f', before {before}' if before else ''})</span></h2>" + history_links(root, conn_id, table, kind,
                                                                              page.next_before_snapshot)
            + render.table(["id", "kind", "total rows", "delta rows", "committed (UTC)", "commit user", "Airflow run"],
                           snapshot_rows, numeric=(0, 2, 3), empty="no snapshot")
            + "<h2>Tags</h2>"
            + render.table(["tag", "snapshot", "created (writer's local time)", "retained", "expired"], tag_rows,
                           numeric=(1,), empty="no tag")
            + "<h2>Branches</h2>" + render.table(["branch", "created (writer's local time)"], branch_rows,
                                                 empty="no branch")
            + "<h2>Consumers</h2>"
            + render.table(["consumer", "next snapshot", "lag (snapshots)", "expired"], consumer_rows, numeric=(1, 2),
                           empty="no consumer")
            + "<h2>Partitions</h2>"
            + render.table(["partition", "buckets", "files", "rows", "size", "level-0 files", "max sorted runs",
                            "small files", "DV ratio", "postpone files"], partition_rows,
                           numeric=(1, 2, 3, 5, 6, 7, 9), empty="no partition"))
