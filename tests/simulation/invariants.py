"""The invariants of the commit protocol, checked on the raw in-memory store (no scheduling points, no faults).

Cheap ones after every step (and at each creation, through the store's hooks): snapshot ids present are
contiguous; no ``snapshot-N`` is created twice (ids a rollback removed excepted); ``snapshot-N`` is created only
while ``snapshot-(N-1)`` exists (a successor of the latest, not of an expired base); the engine's
``latest_snapshot_id`` is the largest id present; with a metastore's lock (``locked`` scenarios), the checks of
:mod:`tests.simulation.sim_metastore` (one actor inside the lock at a time, every snapshot created inside it),
reported through :meth:`Checker.report`. Expensive ones at the end of a run: every acknowledged commit is in
the latest snapshot (unless a rollback removed it), every retained snapshot, tag and branch reads as it read when it
was published (so no file any of them references is missing), the latest snapshot holds no row twice and only rows
that were written, and a streaming consumer saw every committed row exactly once.

Why read at publication: "as it read when it was written" needs the content at that moment, and reading through a
raw-IO table from inside the creating request costs no scheduling point, so it cannot change the interleaving.

The checker reads through the engine's own read path (scan, merge, projection), but decodes each data file and each
manifest once (:class:`_Decoded`): a file's bytes never change under a (path, generation) of the store, and the
checker reads the same files again and again (every publication, tag and branch, and everything at the end). The
actors never see that memo: they read through :class:`~tests.simulation.sim_io.SimFileIO`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from table_engine import Catalog
from table_engine.format.consumer_file import HISTORY_FENCE_ID
from table_engine.format.manifest import ManifestEntry
from table_engine.format.snapshot import Snapshot, latest_snapshot_id, read_snapshot
from table_engine.iceberg.commit import commit_identity
from table_engine.io.base import FileIO
from table_engine.store.branches import BranchManager
from table_engine.store.reading import read as read_module
from table_engine.store.reading import scan as scan_module
from table_engine.table import Table
from tests.simulation.iceberg_invariants import check_latest_files, check_newest
from tests.simulation.mem_io import MemFileIO

_SNAPSHOT = re.compile(r"snapshot-(\d+)")


class _Decoded:
    """The checker's memo of decoded data files and manifests of ``raw``, keyed by (path, generation)."""

    def __init__(self, raw: MemFileIO) -> None:
        self.raw = raw
        self.files: dict[tuple[str, int, tuple[str, ...] | None], Any] = {}
        self.manifests: dict[tuple[str, int], list[ManifestEntry]] = {}
        self._read_file: Callable[..., Any] = getattr(read_module, "read_file")  # noqa: B009 (not re-exported)
        self._read_manifest: Callable[..., list[ManifestEntry]] = getattr(scan_module, "read_manifest")  # noqa: B009

    def read_file(self, file_io: FileIO, path: str, columns: Sequence[str] | None = None) -> Any:
        gen = self.raw.generation(path) if file_io is self.raw else None
        if gen is None:
            return self._read_file(file_io, path, columns)
        key = (path, gen, None if columns is None else tuple(columns))
        hit = self.files.get(key)
        if hit is None:
            hit = self.files[key] = self._read_file(file_io, path, columns)
        return hit

    def read_manifest(self, file_io: FileIO, path: str,
                      partition_filter: Callable[[bytes], bool] | None = None) -> list[ManifestEntry]:
        gen = self.raw.generation(path) if file_io is self.raw and partition_filter is None else None
        if gen is None:
            return self._read_manifest(file_io, path, partition_filter)
        hit = self.manifests.get((path, gen))
        if hit is None:
            hit = self.manifests[(path, gen)] = self._read_manifest(file_io, path, None)
        return list(hit)

    @contextmanager
    def active(self) -> Iterator[None]:
        """The engine's read path decodes through this memo inside the block (only the checker runs then: no
        scheduling point is reached while it reads the raw store)."""
        setattr(read_module, "read_file", self.read_file)  # noqa: B010 (the names the read path calls)
        setattr(scan_module, "read_manifest", self.read_manifest)  # noqa: B010
        try:
            yield
        finally:
            setattr(read_module, "read_file", self._read_file)  # noqa: B010
            setattr(scan_module, "read_manifest", self._read_manifest)  # noqa: B010


class InvariantViolation(AssertionError):
    """An invariant of the protocol does not hold (a finding, not a harness error)."""


@dataclass
class Ack:
    actor: str
    snapshot_id: int
    ids: tuple[int, ...]
    index: int
    partition: str | None = None


@dataclass
class StreamLog:
    """What a streaming consumer saw: ids in order, and the snapshot it read up to (exclusive)."""

    ids: list[int] = field(default_factory=list)
    next_snapshot: int | None = None


class Checker:
    """Records publications, tags, branches and acknowledgements of one run and checks them."""

    def __init__(self, raw: MemFileIO, warehouse: str, identifier: str) -> None:
        self.raw = raw
        self.catalog = Catalog(warehouse, file_io=raw)
        self.identifier = identifier
        self.table_path = self.catalog.table_path(identifier)
        self._snap_dir = f"{self.table_path}/snapshot/"
        self._tag_dir = f"{self.table_path}/tag/tag-"
        self._table: Table | None = None
        self.ids: set[int] = set()
        self.published: dict[int, list[int]] = {}
        self.tags: dict[str, list[int]] = {}
        self.branches: dict[str, list[int]] = {}
        self.acks: list[Ack] = []
        self.written: set[int] = set()
        self.streams: dict[str, StreamLog] = {}
        self.violations: list[str] = []
        self.rollback_active = 0
        self.rollbacks = 0
        self.rollback_floor: int | None = None
        self.created_after_rollback: Counter[int] = Counter()
        self.pending_tags: set[str] = set()
        """Tag files written whose create_tag() has not returned yet."""
        self.epoch = 0
        """Rewrites of history done so far: the history fence's file deleted (a rollback ended) moves it on."""
        self.creations: dict[int, list[tuple[int, frozenset[int]]]] = {}
        """snapshot id -> (epoch, ids it read) of every creation of that id."""
        self.rollback_targets: dict[int, int] = {}
        """epoch -> target of the rollback that ended it."""
        self.append_only = True
        self.drops: list[tuple[int, frozenset[str]]] = []
        """(snapshot id, partitions) of every partition expiry's drop commit."""
        self.creation_checks: list[Callable[[int], None]] = []
        """Called with each ``snapshot-N`` of the table as it is created, by the creating actor (the simulated
        metastore's lock check); they :meth:`report` what is wrong."""
        self.iceberg_dir: str | None = None
        """The table's Iceberg metadata directory when its commits write it (:mod:`.iceberg_invariants`)."""
        self.identities: dict[int, set[str]] = {}
        """snapshot id -> the commit identities (uuids) it was created with (Iceberg metadata must name one)."""
        self.removed: set[int] = set()
        """Ids an acknowledged row-level DELETE removed (their absence is no loss), or that one may have removed
        (it failed after an injected fault)."""
        self._decoded = _Decoded(raw)
        self._checked: tuple[int, int] | None = None
        raw.on_create = self._created
        raw.on_delete = self._deleted

    # ---- recording -----------------------------------------------------------------------------------------------
    def table(self) -> Table:
        if self._table is None:
            self._table = self.catalog.get_table(self.identifier)
            self.append_only = not self._table.primary_keys
        return self._table

    def read_ids(self, snapshot_id: int | None = None, tag: str | None = None, branch: str | None = None) -> list[int]:
        t = self.table() if branch is None else self.catalog.get_table(f"{self.identifier}$branch_{branch}")
        with self._decoded.active():
            return sorted(t.read(columns=["id"], snapshot_id=snapshot_id, tag=tag).column("id").to_pylist())

    def _sid(self, path: str) -> int | None:
        if not path.startswith(self._snap_dir):
            return None
        m = _SNAPSHOT.fullmatch(path[len(self._snap_dir):])
        return int(m.group(1)) if m else None

    def report(self, violation: str) -> None:
        """A violation found outside the checker (the simulated metastore's lock checks): the run fails with it
        after the current step."""
        self.violations.append(violation)

    def _created(self, path: str) -> None:
        sid = self._sid(path)
        if sid is not None:
            self.ids.add(sid)
            for check in self.creation_checks:
                check(sid)
            if self.rollback_floor is not None and sid > self.rollback_floor:
                self.created_after_rollback[sid] += 1  # ids above a rollback's target are free again, once
                reused = self.created_after_rollback[sid] > 1
            else:
                reused = self.raw.created[path] > 1 and not self.rollback_active
            if reused:
                self.violations.append(f"snapshot-{sid} created a second time (snapshot id reused after it was "
                                       "deleted)")
            if sid > 1 and not self.raw.is_file(f"{self._snap_dir}snapshot-{sid - 1}") and not self.rollback_active:
                self.violations.append(f"snapshot-{sid} created while snapshot-{sid - 1} does not exist (built on a "
                                       "base that is no longer the latest)")
            if self.iceberg_dir is not None:
                self.identities.setdefault(sid, set()).add(commit_identity(Snapshot.from_json(
                    self.raw.read_bytes(path), path)))
            try:
                self.published[sid] = self.read_ids(snapshot_id=sid)
                self.creations.setdefault(sid, []).append((self.epoch, frozenset(self.published[sid])))
            except Exception as e:
                self.violations.append(f"snapshot {sid} cannot be read right after its publication: "
                                       f"{type(e).__name__}: {e}")
        elif path.startswith(self._tag_dir):
            # a tag file is not a tag yet: its creator verifies it and may withdraw it (its snapshot expired or was
            # rolled back meanwhile); it is checked once create_tag() returned (tag_created)
            self.pending_tags.add(path[len(self._tag_dir):])

    def tag_created(self, name: str) -> None:
        """``create_tag(name)`` returned: the tag must read, now and at the end (unless deleted)."""
        self.pending_tags.discard(name)
        if not self.raw.is_file(f"{self._tag_dir}{name}"):
            return  # already deleted again (by a rollback that ended meanwhile, or its own deletion)
        try:
            self.tags[name] = self.read_ids(tag=name)
        except Exception as e:
            self.violations.append(f"tag {name} cannot be read after create_tag() returned: {type(e).__name__}: {e}")

    def _deleted(self, path: str) -> None:
        sid = self._sid(path)
        if path.endswith(f"/consumer/consumer-{HISTORY_FENCE_ID}"):
            self.epoch += 1  # a rollback is done: later publications build on its target
        if sid is not None:
            self.ids.discard(sid)
        elif path.startswith(self._tag_dir):
            self.tags.pop(path[len(self._tag_dir):], None)

    def ack(self, actor: str, snapshot_id: int, ids: Iterable[int], partition: str | None = None) -> None:
        self.acks.append(Ack(actor, snapshot_id, tuple(ids), len(self.acks), partition))

    def partitions_dropped(self, snapshot_ids: Sequence[int], partitions: Sequence[str]) -> None:
        """A partition expiry committed ``snapshot_ids``, dropping ``partitions`` (their rows then, legitimately,
        leave the table: every commit to them published before the drop)."""
        if snapshot_ids:
            self.drops.append((max(snapshot_ids), frozenset(partitions)))

    def attempt(self, ids: Iterable[int]) -> None:
        self.written.update(ids)

    def deleted(self, ids: Iterable[int]) -> None:
        """A row-level DELETE of ``ids`` returned a snapshot (or may have committed): their rows leave the table
        legitimately; the table is no longer append-only (a stream's rows need not equal a snapshot's)."""
        self.removed.update(ids)
        self.append_only = False

    def branch_created(self, name: str) -> None:
        self.branches[name] = self.read_ids(branch=name)

    def rollback_started(self) -> None:
        self.rollback_active += 1
        self.rollbacks += 1

    def rollback_done(self, target: int) -> None:
        self.rollback_active -= 1
        self.rollback_floor = target if self.rollback_floor is None else min(self.rollback_floor, target)
        self.created_after_rollback.clear()
        self.rollback_targets[self.epoch - 1] = target  # the fence's deletion ended its epoch

    def _rolled_back(self, a: Ack) -> bool:
        """Whether a rollback legitimately removed acknowledged commit ``a``: the creation of its snapshot that holds
        its rows happened before a rollback to an older snapshot ended (whenever ``write()`` returned)."""
        for epoch, rows in self.creations.get(a.snapshot_id, []):
            target = self.rollback_targets.get(epoch)
            if set(a.ids) <= rows and target is not None and a.snapshot_id > target:
                return True
        return False

    def _dropped(self, a: Ack) -> bool:
        """Whether a partition expiry published after ``a`` dropped its partition."""
        return a.partition is not None and any(sid > a.snapshot_id and a.partition in parts
                                               for sid, parts in self.drops)

    # ---- checks --------------------------------------------------------------------------------------------------
    def after_step(self) -> None:
        state = (self.raw.version, self.rollback_active)
        if state == self._checked and not self.violations:
            return  # nothing changed since the last check
        self._checked = state
        if not self.violations and self.ids and not self.rollback_active:
            lo, hi = min(self.ids), max(self.ids)
            if hi - lo + 1 != len(self.ids):
                self.violations.append(f"snapshot ids are not contiguous: {sorted(self.ids)}")
            else:
                latest = latest_snapshot_id(self.raw, self.table_path)
                if latest != hi:
                    self.violations.append(f"latest_snapshot_id() is {latest}, the largest snapshot id present {hi}")
        if not self.violations and self.iceberg_dir is not None:
            found = check_newest(self.raw, self.iceberg_dir, self.identities)
            if found is not None:
                self.violations.append(found)
        if self.violations:
            raise InvariantViolation("; ".join(self.violations))

    def final(self) -> None:
        """The end-of-run checks (after every actor finished)."""
        self.after_step()
        v = self.violations
        latest = latest_snapshot_id(self.raw, self.table_path)
        rows: list[int] = []
        if latest is not None:
            try:
                rows = self.read_ids(snapshot_id=latest)
            except Exception as e:
                v.append(f"the latest snapshot {latest} cannot be read: {type(e).__name__}: {e}")
        present = set(rows)
        for a in self.acks:
            missing = [i for i in a.ids if i not in present and i not in self.removed]
            if missing and not self._rolled_back(a) and not self._dropped(a):
                v.append(f"acknowledged commit lost: {a.actor}'s write returned snapshot {a.snapshot_id}, but ids "
                         f"{missing[0]}..{missing[-1]} ({len(missing)}) are not in the latest snapshot {latest}")
        if len(present) != len(rows):
            v.append(f"the latest snapshot {latest} holds {len(rows) - len(present)} row(s) twice")
        if present - self.written:
            v.append(f"the latest snapshot {latest} holds ids nobody wrote: {sorted(present - self.written)[:5]}")
        for sid in sorted(self.ids):
            try:
                got = self.read_ids(snapshot_id=sid)
            except Exception as e:
                v.append(f"retained snapshot {sid} cannot be read: {type(e).__name__}: {e}")
                continue
            if sid in self.published and got != self.published[sid]:
                v.append(f"retained snapshot {sid} reads {len(got)} rows, {len(self.published[sid])} at publication")
        for name in sorted(self.tags):
            try:
                got = self.read_ids(tag=name)
            except Exception as e:
                v.append(f"tag {name} cannot be read: {type(e).__name__}: {e}")
                continue
            if got != self.tags[name]:
                v.append(f"tag {name} reads {len(got)} rows, {len(self.tags[name])} when it was created")
        self._check_branches()
        self._check_streams()
        if self.iceberg_dir is not None and latest is not None:
            found = check_latest_files(self.raw, self.iceberg_dir, self.table(),
                                       read_snapshot(self.raw, self.table_path, latest))
            if found is not None:
                v.append(found)
        if v:
            raise InvariantViolation("; ".join(v))

    def _check_branches(self) -> None:
        t = self.table()
        for name, want in sorted(self.branches.items()):
            if not BranchManager.of(t.store).exists(name):
                continue
            try:
                got = self.read_ids(branch=name)
            except Exception as e:
                self.violations.append(f"branch {name} cannot be read: {type(e).__name__}: {e}")
                continue
            if got != want:
                self.violations.append(f"branch {name} reads {len(got)} rows, {len(want)} when it was created")

    def _check_streams(self) -> None:
        for name, log in sorted(self.streams.items()):
            if len(set(log.ids)) != len(log.ids):
                self.violations.append(f"consumer {name} saw a row twice")
            if not self.append_only or not log.next_snapshot or log.next_snapshot <= 1:
                continue
            want = self.published.get(log.next_snapshot - 1)
            if want is not None and sorted(log.ids) != want:
                lost = sorted(set(want) - set(log.ids))
                self.violations.append(f"consumer {name} read up to snapshot {log.next_snapshot - 1} but saw "
                                       f"{len(log.ids)} rows of its {len(want)} (skipped e.g. {lost[:5]})")
