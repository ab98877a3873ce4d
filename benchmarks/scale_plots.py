"""Plots of ``bench_scale.py`` results (matplotlib only: no engine imports, so any Python with matplotlib draws
them from the JSON). Each figure names the machine and the date of the run.

  python benchmarks/scale_plots.py .bench/scale.json benchmarks/plots
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullFormatter, ScalarFormatter  # noqa: E402

MIB = 2**20


def _footer(fig: Any, res: dict[str, Any]) -> None:
    m = res["machine"]
    mode = "quick run" if res.get("quick") else "full run"
    fig.text(0.01, 0.01, f"{m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; Python {m['python']}, "
                          f"pyarrow {m['pyarrow']}; {m['date']}; {mode}; load avg at start "
                          f"{m['load_average_start'][0]:.1f}", fontsize=7, color="0.35")


def _plain(*axes: Any) -> None:
    """Plain numbers (not 10^x) on log axes."""
    for ax in axes:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(ScalarFormatter())
            axis.set_minor_formatter(NullFormatter())


def _save(fig: Any, res: dict[str, Any], path: Path) -> Path:
    _footer(fig, res)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_history(res: dict[str, Any], path: Path) -> Path:
    cps = res["history"]["checkpoints"]
    xs = [c["snapshots"] for c in cps]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    a1.plot(xs, [c["median_commit_ms"] for c in cps], "o-", label="commit (Table.commit)")
    a1.plot(xs, [c["median_write_commit_ms"] for c in cps], "s--", label="write + commit")
    if "median_plain_commit_ms" in cps[0]:
        a1.plot(xs, [c["median_plain_commit_ms"] for c in cps], "^:", label="plain commits")
    if "median_compacting_commit_ms" in cps[0]:
        a1.plot(xs, [c["median_compacting_commit_ms"] for c in cps], "D-.",
                label="commits carrying a compaction")
        a2.plot(xs, [c["median_plain_metadata_reads"] for c in cps], "^:", label="plain commits (median)")
        a2.plot(xs, [c["median_compacting_metadata_reads"] for c in cps], "D-.",
                label="commits carrying a compaction (median)")
    a1.set(xscale="log", xlabel="snapshots in the table", ylabel="median ms per commit (10-row upsert)",
           title="Commit time vs snapshots")
    a1.set_ylim(bottom=0)
    a1.legend(fontsize=8)
    a2.plot(xs, [c["mean_metadata_reads"] for c in cps], "o-", label="metadata files read (mean)")
    a2.plot(xs, [c["median_metadata_reads"] for c in cps], "s--", label="metadata files read (median)")
    a2.plot(xs, [c["max_metadata_reads"] for c in cps], "v:", color="0.5", label="metadata files read (max)")
    a2.plot(xs, [c["median_snapshot_reads"] for c in cps], "x--", label="snapshot files (median)")
    a2.set(xscale="log", xlabel="snapshots in the table", ylabel="files per commit",
           title="Metadata reads per commit vs snapshots")
    a2.set_ylim(bottom=0)
    a2.legend(fontsize=8)
    _plain(a1, a2)
    return _save(fig, res, path)


def plot_planning(res: dict[str, Any], path: Path) -> Path:
    pts = res["planning"]["points"]
    xs = [p["files"] for p in pts]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    a1.plot(xs, [p["full_plan_s"] for p in pts], "o-", label="whole table")
    a1.plot(xs, [p["one_partition_plan_s"] for p in pts], "s-", label="one partition")
    k = pts[-1]["full_plan_s"] / pts[-1]["files"]
    a1.plot([0, xs[-1]], [0, k * xs[-1]], color="0.6", lw=0.8, ls=":", label="linear through the largest")
    a1.set(xlabel="data files", ylabel="plan seconds (median of 3)",
           title=f"Plan time vs files ({pts[0]['partitions']} partitions x {pts[0]['buckets']} buckets)")
    a1.legend(fontsize=8)
    a2.plot(xs, [100 * p["ratio"] for p in pts], "o-")
    a2.axhline(5, color="tab:red", lw=0.8, ls=":", label="goal: 5%")
    a2.set(xlabel="data files", ylabel="% of the whole-table plan", title="One-partition plan / whole plan")
    a2.set_ylim(bottom=0)
    a2.legend(fontsize=8)
    return _save(fig, res, path)


def plot_memory(res: dict[str, Any], path: Path) -> Path:
    pts = res["memory"]["points"]
    xs = [p["rows"] / 1e6 for p in pts]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for op, label in (("write", "write (1 M-row batches, one commit)"), ("read", "read as batches"),
                      ("compact", "full compaction (one bucket)")):
        ax.plot(xs, [p[op]["peak_rss_bytes"] / MIB for p in pts], "o-", label=label)
    ax.axhline(1.5 * 1024, color="tab:red", lw=0.8, ls=":", label="goal: 1.5 GiB")
    ax.axhline(res["memory"]["baseline_rss_bytes"] / MIB, color="0.6", lw=0.8, ls="--", label="idle process")
    ax.set(xscale="log", xlabel="rows (millions)", ylabel="peak RSS (MiB)", title="Peak RSS vs rows")
    ax.set_xticks(xs, [f"{x:g}" for x in xs])
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    if "memory_run" in res:  # the memory section was rerun on its own: its own date and load
        run = res["memory_run"]
        res = {**res, "machine": {**res["machine"], "date": run["date"],
                                  "load_average_start": run["load_average_start"]}}
    return _save(fig, res, path)


def plot_expiry(res: dict[str, Any], path: Path) -> Path:
    pts = res["expiry"]["points"]
    xs = [p["expired"] for p in pts]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    a1.plot(xs, [p["seconds"] for p in pts], "o-")
    a1.set(xscale="log", xlabel="snapshots expired (k)", ylabel="seconds",
           title=f"Expiry time vs k (of ~{pts[0]['snapshots_before']:,} snapshots)")
    a2.plot(xs, [p["metadata_reads"] for p in pts], "o-", label="metadata files read")
    a2.plot(xs, xs, color="0.6", lw=0.8, ls=":", label="k")
    a2.set(xscale="log", yscale="log", xlabel="snapshots expired (k)", ylabel="files", title="Expiry reads vs k")
    a2.legend(fontsize=8)
    a1.set_ylim(bottom=0)
    _plain(a1, a2)
    for ax in (a1, a2):
        ax.set_xticks(xs, [str(x) for x in xs])
    return _save(fig, res, path)


def plot_all(res: dict[str, Any], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = []
    for section, fn in (("history", plot_history), ("planning", plot_planning), ("memory", plot_memory),
                        ("expiry", plot_expiry)):
        if section in res:
            drawn.append(fn(res, out_dir / f"scale_{section}.png"))
    return drawn


if __name__ == "__main__":
    for p in plot_all(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2])):
        print(f"plot: {p}")
