"""Orphan file cleaning (Paimon's ``remove_orphan_files``, ``LocalOrphanFilesClean``).

A file is an orphan when nothing references it: no snapshot, tag or long-lived changelog (of the main branch or
any branch) lists it through its manifest lists, manifests, index manifest or statistics. Orphans come from
failed or killed writers and commits, and from expiries or rollbacks that were interrupted.

Candidates are the files in ``manifest/``, ``index/``, ``statistics/``, the bucket directories under the partition
directories (in the table and below each root of ``data-file.external-paths``, as Paimon does: a root must belong
to one table), and stray files (temporary files) in ``snapshot/`` and ``changelog/``. Only files last modified before
``older_than_millis`` (default: one day ago) are deleted: files of commits still in flight are young, so a
writer that has written files but not yet committed them is never harmed -- as long as no commit takes longer
than the threshold. Referenced data files are collected by *name* from every manifest entry (ADD or DELETE)
reachable from any snapshot, tag or changelog -- a superset of what is live, which is the safe side.

If the references cannot be read completely (a manifest of a snapshot that still exists is corrupt), nothing
is deleted. A snapshot that disappears while being read (expired concurrently) is simply skipped.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from table_engine import clock
from table_engine.core_options import DATA_FILE_EXTERNAL_PATHS
from table_engine.errors import (
    CommitConflictError,
    MissingFileError,
    OptionError,
    TableEngineError,
    naming_snapshot,
)
from table_engine.format.changelog_file import changelog_dir
from table_engine.format.manifest import manifest_file_names
from table_engine.format.snapshot import Snapshot, earliest_snapshot_id, snapshot_dir
from table_engine.format.tag_file import list_tag_names, tag_dir
from table_engine.io.file_io import FileStatus
from table_engine.io.paths import STAGING_DIR_PREFIX, table_root
from table_engine.store.branches import branch_roots
from table_engine.store.context import StoreContext
from table_engine.store.external_paths import same_filesystem
from table_engine.store.lifecycle.file_refs import FileRefs

__all__ = ["DAY_MILLIS", "OrphanListing", "OrphanResult", "find_orphans", "remove_orphan_files"]

log = logging.getLogger(__name__)

DAY_MILLIS = 86_400_000
DELETE_BATCH = 1000
"""Orphans are deleted in batches of this many while the table is listed (memory stays bounded)."""
_MANIFEST_CHUNK = 64
_COLLECT_ATTEMPTS = 5
"""How often orphan cleaning reads the table's references: again when a concurrent expiry removed some of them, or
when metadata is missing although nothing moved (a tag in flight, see :func:`_used_names`)."""
_COLLECT_WAIT_SECONDS = 0.05
"""The first wait before reading again when nothing moved (doubled each time: 0.75 s over all attempts)."""
_SNAPSHOT_FILE = re.compile(r"snapshot-\d+|EARLIEST|LATEST")
_CHANGELOG_FILE = re.compile(r"changelog-\d+|EARLIEST|LATEST")
_ENTROPY_DIRS = re.compile(r"[01]{4}/[01]{4}/[01]{4}/[01]{8}")


@dataclass
class OrphanResult:
    """Orphan files found (and deleted unless dry run)."""

    paths: list[str] = field(default_factory=list)
    total_bytes: int = 0
    dry_run: bool = False

    @property
    def count(self) -> int:
        return len(self.paths)


@dataclass
class OrphanListing:
    """Orphan candidates of a bounded listing (nothing deleted): the first ``SAMPLE`` paths, their count and
    bytes, how many candidate files were looked at and whether the listing stopped at its limit."""

    SAMPLE = 100

    paths: list[str] = field(default_factory=list)
    count: int = 0
    total_bytes: int = 0
    listed: int = 0
    truncated: bool = False


def find_orphans(ctx: StoreContext, older_than_millis: int, max_files: int) -> OrphanListing:
    """The files :func:`remove_orphan_files` would delete with this ``older_than_millis``, looking at
    ``max_files`` candidate files at most (``truncated`` says the listing was cut); deletes nothing."""
    if max_files < 1:
        raise OptionError(f"max_files must be at least 1, got {max_files}")
    used_meta, used_data = _used_names(ctx, FileRefs(ctx, cache=False))
    used_by = {"meta": used_meta, "data": used_data}
    out = OrphanListing()
    for st, kind, keep in _candidates(ctx):
        if out.listed >= max_files:
            out.truncated = True
            break
        out.listed += 1
        name = st.path.rstrip("/").rsplit("/", 1)[-1]
        used = used_by[kind] if kind else None
        if st.is_dir or st.mtime_millis >= older_than_millis or (used is not None and name in used) \
                or (keep is not None and keep.fullmatch(name)):
            continue
        out.count += 1
        out.total_bytes += st.size
        if len(out.paths) < OrphanListing.SAMPLE:
            out.paths.append(st.path)
    return out


def remove_orphan_files(ctx: StoreContext, older_than_millis: int | None = None, dry_run: bool = False,
                        now_millis: int | None = None) -> OrphanResult:
    """Delete (or with ``dry_run`` only list) orphan files older than ``older_than_millis`` (epoch ms)."""
    now = clock.now_millis() if now_millis is None else now_millis
    cutoff = now - DAY_MILLIS if older_than_millis is None else older_than_millis
    if cutoff > now:
        raise OptionError("older_than must not be in the future: files of commits in flight would be deleted")
    refs = FileRefs(ctx, cache=False)
    used_meta, used_data = _used_names(ctx, refs)
    result = OrphanResult(dry_run=dry_run)
    tp = ctx.table_path
    batch: list[str] = []

    def consider(st: FileStatus, used: set[str] | None, keep: re.Pattern[str] | None = None) -> None:
        name = st.path.rstrip("/").rsplit("/", 1)[-1]
        if st.is_dir or st.mtime_millis >= cutoff:
            return
        if (used is not None and name in used) or (keep is not None and keep.fullmatch(name)):
            return
        result.paths.append(st.path)
        result.total_bytes += st.size
        if not dry_run:
            batch.append(st.path)
            if len(batch) >= DELETE_BATCH:
                refs.delete(batch)
                batch.clear()

    used_by = {"meta": used_meta, "data": used_data}
    for st, kind, keep in _candidates(ctx):  # streamed: one directory listing (or listing page) at a time
        consider(st, used_by[kind] if kind else None, keep)
    if batch:
        refs.delete(batch)
    result.paths.sort()
    log.info("%s %d orphan files (%d bytes) of %s older than %d", "found" if dry_run else "removed",
             result.count, result.total_bytes, tp, cutoff)
    return result


def _used_names(ctx: StoreContext, refs: FileRefs) -> tuple[set[str], set[str]]:
    """:func:`_collect_used_names`, again when metadata it read was missing.

    Two ways that happens beside a healthy table: a concurrent expiry or tag deletion removed metadata while it was
    read (the earliest snapshot or the tags changed: read again at once), or a tag is being created on a snapshot
    that an expiry removed meanwhile - its creator withdraws it once it sees that (``tags.py``), but until then
    its file names missing metadata while nothing else moved (found by the simulation: ``append-race`` seed 2689).
    So when nothing moved, it waits a moment (0.05 s, doubling) and reads again. It gives up after
    :data:`_COLLECT_ATTEMPTS` reads: with a retryable :class:`CommitConflictError` if the table kept moving, with
    the error as it is if the same metadata stayed missing (a retained snapshot or tag lost it: a repair). Nothing
    is deleted before the references are complete."""
    wait = _COLLECT_WAIT_SECONDS
    for attempt in range(1, _COLLECT_ATTEMPTS + 1):
        before = _versions(ctx)
        try:
            return _collect_used_names(ctx, refs)
        except (MissingFileError, TableEngineError) as e:
            moved = _versions(ctx) != before
            if attempt == _COLLECT_ATTEMPTS:
                if not moved:
                    raise
                raise CommitConflictError(f"orphan cleaning of {ctx.table_path}: concurrent expiries or tag deletions "
                                          f"removed metadata it was reading {attempt} times; nothing was deleted, "
                                          "run it again") from e
            if moved:
                log.info("orphan cleaning of %s reads the table's references again: an expiry or a tag deletion "
                         "ran meanwhile (%s)", ctx.table_path, e)
            else:
                log.info("orphan cleaning of %s reads the table's references again in %.2f s: metadata is missing "
                         "although nothing moved (a tag being created on a snapshot that expired is withdrawn by "
                         "its creator) (%s)", ctx.table_path, wait, e)
                time.sleep(wait)
                wait *= 2
    raise AssertionError("unreachable")  # pragma: no cover


def _versions(ctx: StoreContext) -> tuple[int | None, tuple[str, ...]]:
    """The earliest snapshot and the tags: what a concurrent expiry or tag deletion changes when it deletes
    metadata that orphan cleaning may be reading."""
    return (earliest_snapshot_id(ctx.file_io, ctx.table_path),
            tuple(sorted(n for n, _ in list_tag_names(ctx.file_io, ctx.table_path))))


def _collect_used_names(ctx: StoreContext, refs: FileRefs) -> tuple[set[str], set[str]]:
    """(metadata names, data/changelog/extra file names) referenced by anything in the table.

    Metadata of snapshots and tags must be readable (else: abort); long-lived changelog metadata, and the
    changelog manifest lists of tags, may legitimately point at manifest lists that expiry already removed.
    """
    meta: set[str] = set()
    data: set[str] = set()
    roots = list(branch_roots(ctx.file_io, ctx.table_path).values())  # every line, whichever this context is
    manifests: dict[str, bool] = {}
    owner: dict[str, int] = {}  # manifest -> a snapshot listing it (named if it is missing)
    try:
        for root in roots:
            for d, strict in ((snapshot_dir(root), True), (tag_dir(root), True), (changelog_dir(root), False)):
                for snap in _read_all(ctx, (st for st in ctx.file_io.list_status(d) if not st.is_dir)):
                    _snapshot_refs(refs, snap, strict, meta, manifests, owner)
        meta.update(manifests)
        names = sorted(manifests)
        for start in range(0, len(names), _MANIFEST_CHUNK):  # in parallel, a chunk of manifests at a time
            chunk = names[start:start + _MANIFEST_CHUNK]
            for files in refs.parallel(chunk, lambda name: _manifest_file_names(refs, name, manifests, owner)):
                data.update(files)
    except MissingFileError as e:
        raise e.with_detail(f": orphan cleaning of {ctx.table_path} aborted (another process may be expiring "
                            "snapshots -- retry later, or repair the table)") from e
    except FileNotFoundError as e:
        raise TableEngineError(
            f"orphan cleaning of {ctx.table_path} aborted: metadata of a live snapshot or tag is missing ({e}); "
            "another process may be expiring snapshots -- retry later, or repair the table") from e
    return meta, data


def _snapshot_refs(refs: FileRefs, snap: Snapshot, strict: bool, meta: set[str], manifests: dict[str, bool],
                   owner: dict[str, int]) -> None:
    """Record the metadata names ``snap`` references in ``meta`` and its manifests in ``manifests`` (name ->
    whether it must exist) and ``owner``."""
    lists = ((snap.base_manifest_list, strict), (snap.delta_manifest_list, strict),
             (snap.changelog_manifest_list, False))  # tags do not keep their snapshot's changelog
    for list_name, must_exist in lists:
        if not list_name:
            continue
        meta.add(list_name)
        with naming_snapshot(snap.id):
            for m in refs.read_list(list_name, missing_ok=not must_exist):
                manifests[m.file_name] = manifests.get(m.file_name, False) or must_exist
                if must_exist:
                    owner.setdefault(m.file_name, snap.id)
    if snap.index_manifest:
        meta.add(snap.index_manifest)
        with naming_snapshot(snap.id):
            for ie in refs.read_index(snap.index_manifest, missing_ok=not strict):
                meta.add(ie.index_file.file_name)
    if snap.statistics:
        meta.add(snap.statistics)


def _manifest_file_names(refs: FileRefs, name: str, manifests: dict[str, bool], owner: dict[str, int]) -> set[str]:
    """Names of the data files (and their extra files) a manifest lists, ADD or DELETE."""
    with naming_snapshot(owner.get(name)):
        try:
            return manifest_file_names(refs.file_io, refs.manifest_path(name))
        except FileNotFoundError:
            if manifests[name]:
                raise
            return set()  # a long-lived changelog's manifest that expiry already removed


def _read_all(ctx: StoreContext, statuses: Iterable[FileStatus]) -> Iterator[Snapshot]:
    """The snapshots (tags, changelogs) of a listing, read one at a time."""
    for st in statuses:
        name = st.path.rstrip("/").rsplit("/", 1)[-1]
        if not re.fullmatch(r"(snapshot|tag|changelog)-.+", name):
            continue
        try:
            snap = Snapshot.from_json(ctx.file_io.read_bytes(st.path), st.path)
        except FileNotFoundError:
            continue  # expired or deleted while listing
        except TableEngineError as e:
            raise TableEngineError(f"orphan cleaning of {ctx.table_path} aborted: cannot read {st.path}: {e}") from e
        yield snap


_META_DIRS = ("manifest", "index", "statistics")


def _candidates(ctx: StoreContext) -> Iterator[tuple[FileStatus, str | None, re.Pattern[str] | None]]:
    """The files orphan cleaning looks at, each with the references that keep it (``"meta"``: metadata names,
    ``"data"``: data file names, None: only the name pattern ``keep``): in ``manifest/``, ``index/``,
    ``statistics/``, ``snapshot/``, ``changelog/``, Spark staging directories (``spark-staging-*``: nothing
    references their files) and the bucket directories below as many ``k=v`` levels as there are partition keys.
    One recursive :meth:`~table_engine.io.base.FileIO.walk` of the table (on an object store: one flat listing,
    paginated), not a listing per directory."""
    tp = table_root(ctx.table_path).rstrip("/")  # the same files whichever branch cleans: they are shared
    depth = len(ctx.schema.partition_keys)
    for st in ctx.file_io.walk(tp):
        parts = st.path[len(tp) + 1:].split("/")
        if st.is_dir or len(parts) < 2:
            continue
        if len(parts) == 2 and parts[0] in _META_DIRS:
            yield st, "meta", None
        elif len(parts) == 2 and parts[0] == "snapshot":
            yield st, None, _SNAPSHOT_FILE
        elif len(parts) == 2 and parts[0] == "changelog":
            yield st, None, _CHANGELOG_FILE
        elif len(parts) == depth + 2 and parts[depth].startswith("bucket-") and all("=" in p for p in parts[:depth]):
            yield st, "data", None
        elif len(parts) == 2 and parts[0].startswith(STAGING_DIR_PREFIX):
            yield st, None, None  # rows a dead Spark job staged: never referenced
    for root in _external_roots(ctx):
        for st in ctx.file_io.walk(root):
            parts = st.path[len(root) + 1:].split("/")
            if st.is_dir or len(parts) < depth + 2 or not parts[depth].startswith("bucket-") \
                    or not all("=" in p for p in parts[:depth]):
                continue
            if len(parts) == depth + 2 or _ENTROPY_DIRS.fullmatch("/".join(parts[depth + 1:-1])):
                yield st, "data", None


def _external_roots(ctx: StoreContext) -> list[str]:
    """The roots of ``data-file.external-paths`` on the table's filesystem, whatever the strategy (Paimon's
    ``listPaimonFileDirs`` lists them all): data files of the table may live there."""
    text = ctx.options.get(DATA_FILE_EXTERNAL_PATHS)
    if not text:
        return []
    roots = [p.strip().rstrip("/") for p in text.split(",") if p.strip()]
    return [r for r in roots if same_filesystem(r, ctx.table_path)]
