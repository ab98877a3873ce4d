"""Snapshot properties for every commit made within a scope: what a job's run adds to each snapshot it commits.

A command (``write``, ``compact``, ``rescale``, ...) may commit through many paths (the table facade, the Spark
driver's commit, postpone and dedicated compaction, a changelog applied to a target table); rather than threading its
``--snapshot-property`` map through each of them, the command runners open :func:`snapshot_properties_scope` around
the run and :class:`~table_engine.store.committing.commit.FileStoreCommit` merges :func:`scoped_properties` into
every snapshot it publishes (properties passed to a commit explicitly win on the same key). A ``ContextVar``: a
scope covers its own thread or task only (every commit runs on the job's driver thread).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from table_engine.format.snapshot import snapshot_properties

__all__ = ["scoped_properties", "snapshot_properties_scope"]

_SCOPED: ContextVar[Mapping[str, str] | None] = ContextVar("table_engine_snapshot_properties", default=None)


@contextmanager
def snapshot_properties_scope(properties: Mapping[str, str] | None) -> Iterator[None]:
    """Within the ``with`` block, every commit's snapshot carries ``properties`` too (nested scopes add to the
    outer one's, the inner winning on a key); a DataError for a key or value that is not a string, before anything
    runs."""
    checked = snapshot_properties(properties) or {}
    token = _SCOPED.set({**(_SCOPED.get() or {}), **checked})
    try:
        yield
    finally:
        _SCOPED.reset(token)


def scoped_properties(explicit: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """The properties of a commit: the scope's, then ``explicit`` (winning on the same key); None when empty."""
    return snapshot_properties({**(_SCOPED.get() or {}), **(explicit or {})})
