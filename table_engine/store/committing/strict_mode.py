"""Paimon's strict commit mode (``commit.strict-mode.last-safe-snapshot``, Paimon 1.2, ``StrictModeChecker``).

A job that read the table at snapshot S and replaces what it read (``rescale``: an OVERWRITE of real buckets;
the postpone compaction) loses the work of commits published after S that it did not see. With the option set to
S, its commit fails instead when another commit user published, after S, a COMPACT or OVERWRITE snapshot, or an
APPEND snapshot that added files to real buckets (an APPEND of postponed files only is safe: the overwrite keeps
``bucket-postpone``).
"""

from __future__ import annotations

from table_engine.core_options import COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT
from table_engine.errors import CommitConflictError
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.snapshot import CommitKind, Snapshot, read_snapshot
from table_engine.io.paths import manifest_dir
from table_engine.store.context import StoreContext
from table_engine.store.reading.scan import read_entries


def check_strict_mode(ctx: StoreContext, commit_user: str, latest: Snapshot | None) -> None:
    """Raise CommitConflictError if a snapshot after the last safe one (up to ``latest``) breaks the rule above."""
    safe = ctx.options.get(COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT)
    if safe is None or safe < 0 or latest is None:
        return
    fio, tp = ctx.file_io, ctx.table_path
    for sid in range(safe + 1, latest.id + 1):
        snap = latest if sid == latest.id else read_snapshot(fio, tp, sid)
        if snap.commit_user == commit_user:
            continue
        why = None
        if snap.commit_kind in (CommitKind.COMPACT, CommitKind.OVERWRITE):
            why = f"a {snap.commit_kind} snapshot"
        elif snap.commit_kind is CommitKind.APPEND:
            metas = read_manifest_list(fio, f"{manifest_dir(tp)}/{snap.delta_manifest_list}")
            if any(e.bucket >= 0 for e in read_entries(fio, tp, metas)):
                why = "an APPEND snapshot with files in real buckets"
        if why is not None:
            raise CommitConflictError(
                f"commit to {tp} conflicts: {why} ({sid}, user {snap.commit_user}) was published after snapshot "
                f"{safe} ({COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT.key}), whose data this commit replaces")
