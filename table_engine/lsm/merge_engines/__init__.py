"""The merge engines of primary-key tables other than ``deduplicate`` (which lives in :mod:`table_engine.lsm.merge`).

* :class:`~.partial_update.PartialUpdateMerge` -- ``partial-update`` (sequence groups, per-field aggregation,
  remove-record-on-delete / on-sequence-group);
* :class:`~.aggregation.AggregateMerge` -- ``aggregation`` (the functions of :mod:`.aggregators`);
* :class:`~.first_row.FirstRowMerge` -- ``first-row``.

:func:`create_merge_function` builds the merge function of a table from its schema;
:func:`~.config.validate_merge_engine` is the check run at table creation and schema change;
:func:`~.aggregation.aggregation_fields` renders the ``$aggregation_fields`` system table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from table_engine.lsm.merge_engines.aggregation import AggregateMerge, aggregation_fields
from table_engine.lsm.merge_engines.config import MergeConfig, validate_merge_engine
from table_engine.lsm.merge_engines.first_row import FirstRowMerge
from table_engine.lsm.merge_engines.partial_update import PartialUpdateMerge

if TYPE_CHECKING:
    from table_engine.format.schema_file import TableSchema
    from table_engine.lsm.merge import MergeFunction

__all__ = ["AggregateMerge", "FirstRowMerge", "MergeConfig", "PartialUpdateMerge", "aggregation_fields",
           "create_merge_function", "validate_merge_engine"]


def create_merge_function(schema: TableSchema, table: str | None = None) -> MergeFunction:
    """The merge function of a primary-key table's ``merge-engine`` (validating its configuration)."""
    from table_engine.lsm.merge import DeduplicateMerge

    config = MergeConfig.parse(schema, table)
    if config.engine == "partial-update":
        return PartialUpdateMerge(config)
    if config.engine == "aggregation":
        return AggregateMerge(config)
    if config.engine == "first-row":
        return FirstRowMerge(config)
    return DeduplicateMerge(config.ignore_delete)
