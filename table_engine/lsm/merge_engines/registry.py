"""The one registry of merge engines: the merge function of a table, and the checks of its merge options.

Adding a merge engine is its module, one :data:`ENGINES` entry here and its value of the ``merge-engine`` option
(:class:`table_engine.core_enums.MergeEngine`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from table_engine.core_enums import MergeEngine, RowLevelOp
from table_engine.core_options import (
    AGGREGATION_REMOVE_RECORD_ON_DELETE,
    DELETION_VECTORS_ENABLED,
    MERGE_ENGINE,
    PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE,
    PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP,
    CoreOptions,
)
from table_engine.errors import OptionError
from table_engine.format.schema_file import TableSchema
from table_engine.lsm.merge_engines.aggregation import AggregateMerge
from table_engine.lsm.merge_engines.config import MergeConfig, validate_config
from table_engine.lsm.merge_engines.deduplicate import DeduplicateMerge
from table_engine.lsm.merge_engines.first_row import FirstRowMerge
from table_engine.lsm.merge_engines.function import MergeFunction
from table_engine.lsm.merge_engines.partial_update import PartialUpdateMerge

__all__ = ["ENGINES", "EngineEntry", "check_engine_options", "create_merge_function", "row_level_refusal",
           "validate_merge_engine"]


def _partial_update_deletes(opts: CoreOptions) -> str | None:
    if opts.get(PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE) or opts.get(PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP):
        return None
    return (f"merge engine partial-update doesn't support batch delete by default; set "
            f"{PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE.key} to true when there is no sequence group, or set "
            f"{PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP.key}")


def _aggregation_deletes(opts: CoreOptions) -> str | None:
    if opts.get(AGGREGATION_REMOVE_RECORD_ON_DELETE):
        return None
    return (f"merge engine aggregation doesn't support batch delete by default; set "
            f"{AGGREGATION_REMOVE_RECORD_ON_DELETE.key} to true")


def _first_row_deletes(opts: CoreOptions) -> str | None:
    del opts
    return ("deleting from a first-row table rewrites the key's files (Paimon's copy-on-write delete); not "
            "supported here yet")


@dataclass(frozen=True)
class EngineEntry:
    """A registered merge engine: how to build its merge function, and what is true of it whatever its
    configuration."""

    create: Callable[[MergeConfig], MergeFunction]
    deletion_vectors: bool = True
    """It may be combined with ``deletion-vectors.enabled`` (an engine that never deletes old data has nothing to
    mark in deletion vectors)."""
    row_level: frozenset[RowLevelOp] = frozenset(RowLevelOp)
    """The row-level changes a primary-key table of this engine takes (Paimon's Spark ``RowLevelOp``: DELETE on
    every engine, UPDATE and MERGE on deduplicate and partial-update only)."""
    delete_refusal: Callable[[CoreOptions], str | None] | None = None
    """Why a change that deletes rows is refused with these options (Paimon's ``validatePKUpsertDeletable``), None
    when it is taken."""


#: the merge engines by ``merge-engine`` value
ENGINES: Mapping[MergeEngine, EngineEntry] = {
    MergeEngine.DEDUPLICATE: EngineEntry(DeduplicateMerge.of),
    MergeEngine.PARTIAL_UPDATE: EngineEntry(PartialUpdateMerge, delete_refusal=_partial_update_deletes),
    MergeEngine.AGGREGATION: EngineEntry(AggregateMerge, row_level=frozenset({RowLevelOp.DELETE}),
                                         delete_refusal=_aggregation_deletes),
    MergeEngine.FIRST_ROW: EngineEntry(FirstRowMerge, deletion_vectors=False, row_level=frozenset({RowLevelOp.DELETE}),
                                       delete_refusal=_first_row_deletes),
}


def create_merge_function(schema: TableSchema, table: str | None = None,
                          options: Mapping[str, str] | None = None) -> MergeFunction:
    """The merge function of a primary-key table's ``merge-engine`` (validating its configuration).

    ``options`` (default: the schema's) are the options in effect, e.g. with dynamic options overlaid; ``table``
    names the table in error messages."""
    if options is not None and dict(options) != dict(schema.options):
        schema = replace(schema, options=dict(options))
    config = MergeConfig.parse(schema, table)
    return ENGINES[MergeEngine(config.engine)].create(config)


def row_level_refusal(opts: CoreOptions, op: RowLevelOp, deletes: bool) -> str | None:
    """Why a primary-key table with ``opts`` does not take ``op`` (``deletes``: the change may delete rows), None
    when it does; the messages are Paimon's."""
    engine = opts.get(MERGE_ENGINE)
    entry = ENGINES[engine]
    if op not in entry.row_level:
        able = [e.value for e, other in ENGINES.items() if op in other.row_level]
        return (f"merge engine {engine.value} can not support {op.value}, currently only {', '.join(able)} can "
                f"support {op.value}")
    if deletes and entry.delete_refusal is not None:
        return entry.delete_refusal(opts)
    return None


def check_engine_options(raw: Mapping[str, str]) -> None:
    """The option combinations a merge engine rejects on any table (Paimon's ``SchemaValidation``)."""
    opts = CoreOptions(raw)
    if opts.deletion_vectors_enabled() and not ENGINES[opts.get(MERGE_ENGINE)].deletion_vectors:
        raise OptionError(f"{DELETION_VECTORS_ENABLED.key} = true cannot be used with {MERGE_ENGINE.key} "
                          f"{opts.merge_engine()}: it never deletes old data, so there is nothing to mark in "
                          f"deletion vectors")


def validate_merge_engine(schema: TableSchema, table: str | None = None) -> None:
    """The check run when a table is created or its schema changes: :func:`check_engine_options`, then the merge
    configuration of a primary-key table and its changelog producer; raises OptionError/SchemaError."""
    check_engine_options(schema.options)
    validate_config(schema, table)
