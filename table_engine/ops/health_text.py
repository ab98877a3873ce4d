"""The readable form of a ``health`` result (``table.maintenance.health()``'s ``to_dict()``) that the CLI prints
before its result line: a summary, the partitions (or buckets) as a table, consumers, tags, the last events."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["render_health"]

_MAX_ROWS = 50

_COLUMNS = (("partition", "partition"), ("bucket", "bucket"), ("files", "files"), ("rows", "rows"),
            ("bytes", "bytes"), ("level0_files", "L0"), ("sorted_runs", "runs"), ("max_sorted_runs", "runs"),
            ("small_files", "small"), ("deletion_vector_ratio", "dv%"), ("postpone_files", "postponed"))


def render_health(h: Mapping[str, Any]) -> str:
    """Several lines of text for a person (the JSON result stays the reference)."""
    lines = [f"health of {h['table']} at snapshot {h['snapshot_id']}"
             + (f" (partitions {h['partition_filter']})" if h.get("partition_filter") else ""),
             f"  files {h['files']}, rows {h['rows']}, bytes {_size(h['bytes'])}; level-0 files {h['level0_files']}, "
             f"max sorted runs {h['max_sorted_runs']} (trigger {h['num_sorted_run_compaction_trigger']}); small files "
             f"{h['small_files']} ({_pct(h['small_file_ratio'])} below {_size(h['small_file_threshold'])}); "
             f"deleted by DVs {h['deleted_rows']} ({_pct(h['deletion_vector_ratio'])}); postponed files "
             f"{h['postpone_files']}"]
    for kind in ("snapshots", "changelogs"):
        r = h[kind]
        if r["count"]:
            lines.append(f"  {kind} {r['count']} ({r['earliest_id']}..{r['latest_id']}), retained min "
                         f"{r['retain_min']} max {r['retain_max']} for {r['time_retained_millis'] // 1000} s: "
                         f"{r['expirable']} expirable, {r['held_by_consumers']} held by consumers")
    rows = h["partitions"] if any(p["partition"] for p in h["partitions"]) else h["buckets"]
    lines += _table(rows)
    for c in h["consumers"]:
        lines.append(f"  consumer {c['consumer_id']}: next snapshot {c['next_snapshot_id']}, {c['lag']} behind"
                     + (" (its snapshot expired)" if c["expired"] else ""))
    if h["tags"]:
        lines.append(f"  tags {len(h['tags'])}: " + ", ".join(
            f"{t['name']}@{t['snapshot_id']}" + (" (expired)" if t["expired"] else "") for t in h["tags"][:20]))
    if h["branches"]:
        lines.append(f"  branches: {', '.join(h['branches'])}")
    for label, key in (("last compaction", "last_compaction"), ("last tag", "last_tag"), ("latest", "latest")):
        e = h.get(key)
        if e:
            props = f", properties {e['properties']}" if e.get("properties") else ""
            lines.append(f"  {label}: snapshot {e['snapshot_id']} {e['commit_kind']} at {_time(e['time_millis'])} "
                         f"by {e['commit_user']}{props}")
    if h.get("last_expiry_millis"):
        lines.append(f"  EARLIEST hint written at {_time(h['last_expiry_millis'])}")
    o = h.get("orphans")
    if o:
        lines.append(f"  orphan candidates: {o['files']} files, {_size(o['bytes'])} (of {o['listed']} listed"
                     + (", listing cut: there may be more" if o["truncated"] else "") + ")")
    return "\n".join(lines)


def _table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return ["  (no files)"]
    cols = [(k, title) for k, title in _COLUMNS if k in rows[0]]
    cells = [[title for _, title in cols]]
    for r in rows[:_MAX_ROWS]:
        cells.append([_pct(r[k]) if k.endswith("ratio") else _size(r[k]) if k == "bytes" else str(r[k])
                      for k, _ in cols])
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    out = ["  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
           for row in cells]
    if len(rows) > _MAX_ROWS:
        out.append(f"  ... {len(rows) - _MAX_ROWS} more (see the JSON result)")
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(n)


def _time(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).isoformat(timespec="seconds")
