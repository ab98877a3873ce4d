"""``repair`` of a table in a filesystem warehouse: its hint files rewritten from the files they point at.

Paimon's ``repair`` procedure makes a metastore (Hive, JDBC) agree with the filesystem; a filesystem catalog has no
metastore (Paimon's ``FileSystemCatalog`` does not support it). What can disagree here are the hints:
``snapshot/LATEST`` and ``snapshot/EARLIEST`` (and ``changelog/LATEST``/``EARLIEST`` of long-lived changelogs),
which a crash between publishing a snapshot and writing the hint, a failed hint write, a hand edit or a copy of the
table can leave stale, missing or garbled. Readers and committers verify the hints and fall back to listing, so a
bad hint costs requests, not correctness; ``repair`` rewrites each from one listing of its directory: LATEST the
newest id, EARLIEST the oldest id of the contiguous run that ends at LATEST (ids below a gap are leftovers of an
interrupted expiry, not part of the history). A directory with no files: its hints are deleted. Hints that are right
already are not touched, so a second run changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from table_engine.format.changelog_file import changelog_dir, list_changelog_ids
from table_engine.format.snapshot import list_snapshot_ids, snapshot_dir
from table_engine.io.file_io import FileIO
from table_engine.store.context import StoreContext

__all__ = ["HintRepair", "RepairResult", "repair_hints"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HintRepair:
    """One hint file rewritten (or deleted: ``new`` None)."""

    path: str
    old: str | None
    new: int | None


@dataclass
class RepairResult:
    """The hints of one table that ``repair`` rewrote, and what they now say."""

    repaired: list[HintRepair] = field(default_factory=list)
    latest_snapshot_id: int | None = None
    earliest_snapshot_id: int | None = None
    latest_changelog_id: int | None = None
    earliest_changelog_id: int | None = None


def repair_hints(ctx: StoreContext) -> RepairResult:
    """Rewrite the snapshot and changelog hints of the table in ``ctx`` from the files present (see the module)."""
    fio, tp = ctx.file_io, ctx.table_path
    result = RepairResult()
    result.earliest_snapshot_id, result.latest_snapshot_id = _fix(
        fio, snapshot_dir(tp), list_snapshot_ids, tp, result)
    result.earliest_changelog_id, result.latest_changelog_id = _fix(
        fio, changelog_dir(tp), list_changelog_ids, tp, result)
    if result.repaired:
        log.info("repaired hints of %s: %s", tp, [(r.path.rsplit("/", 2)[-2:], r.old, r.new) for r in result.repaired])
    return result


def _fix(fio: FileIO, directory: str, list_ids: Callable[[FileIO, str], list[int]], table_path: str,
         result: RepairResult) -> tuple[int | None, int | None]:
    ids = list_ids(fio, table_path)
    latest = ids[-1] if ids else None
    earliest = latest
    if ids:
        for i in range(len(ids) - 1, 0, -1):  # down the contiguous run that ends at latest
            if ids[i - 1] != ids[i] - 1:
                break
            earliest = ids[i - 1]
    for name, want in (("EARLIEST", earliest), ("LATEST", latest)):
        path = f"{directory}/{name}"
        old = _read(fio, path)
        if want is None:
            if old is not None:
                fio.try_delete(path)
                result.repaired.append(HintRepair(path, old, None))
        elif old is None or old.strip() != str(want):
            fio.overwrite_hint(path, str(want).encode("ascii"))
            result.repaired.append(HintRepair(path, old, want))
    return earliest, latest


def _read(fio: FileIO, path: str) -> str | None:
    try:
        return fio.read_bytes(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
