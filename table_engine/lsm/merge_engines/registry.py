"""The one registry of merge engines: the merge function of a table, and the checks of its merge options.

Adding a merge engine is its module, one :data:`ENGINES` entry here and its value of the ``merge-engine`` option
(:class:`table_engine.core_enums.MergeEngine`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from table_engine.core_enums import MergeEngine
from table_engine.core_options import DELETION_VECTORS_ENABLED, MERGE_ENGINE, CoreOptions
from table_engine.errors import OptionError
from table_engine.format.schema_file import TableSchema
from table_engine.lsm.merge_engines.aggregation import AggregateMerge
from table_engine.lsm.merge_engines.config import MergeConfig, validate_config
from table_engine.lsm.merge_engines.deduplicate import DeduplicateMerge
from table_engine.lsm.merge_engines.first_row import FirstRowMerge
from table_engine.lsm.merge_engines.function import MergeFunction
from table_engine.lsm.merge_engines.partial_update import PartialUpdateMerge

__all__ = ["ENGINES", "EngineEntry", "check_engine_options", "create_merge_function", "validate_merge_engine"]


@dataclass(frozen=True)
class EngineEntry:
    """A registered merge engine: how to build its merge function, and what is true of it whatever its
    configuration."""

    create: Callable[[MergeConfig], MergeFunction]
    deletion_vectors: bool = True
    """It may be combined with ``deletion-vectors.enabled`` (an engine that never deletes old data has nothing to
    mark in deletion vectors)."""


#: the merge engines by ``merge-engine`` value
ENGINES: Mapping[MergeEngine, EngineEntry] = {
    MergeEngine.DEDUPLICATE: EngineEntry(DeduplicateMerge.of),
    MergeEngine.PARTIAL_UPDATE: EngineEntry(PartialUpdateMerge),
    MergeEngine.AGGREGATION: EngineEntry(AggregateMerge),
    MergeEngine.FIRST_ROW: EngineEntry(FirstRowMerge, deletion_vectors=False),
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
