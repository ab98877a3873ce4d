"""The merge engines of primary-key tables and the one registry of them.

* :class:`~.deduplicate.DeduplicateMerge` -- ``deduplicate`` (the default);
* :class:`~.partial_update.PartialUpdateMerge` -- ``partial-update`` (sequence groups, per-field aggregation,
  remove-record-on-delete / on-sequence-group);
* :class:`~.aggregation.AggregateMerge` -- ``aggregation`` (the functions of :mod:`.aggregators`);
* :class:`~.first_row.FirstRowMerge` -- ``first-row``.

Every merge function implements :class:`~.function.MergeFunction` and states what the store may rely on in its
:class:`~.function.MergeCapabilities`; no code outside this package looks at an engine's name. Adding an engine is
its module, one :data:`ENGINES` entry and its value of the ``merge-engine`` option
(:class:`table_engine.core_enums.MergeEngine`).

:func:`create_merge_function` builds the merge function of a table from its schema (once per table: see
:attr:`table_engine.store.context.StoreContext.merge_function`); :func:`validate_merge_engine` is the check run at
table creation and schema change, :func:`check_engine_options` the one run on every set of options;
:func:`~.aggregation.aggregation_fields` renders the ``$aggregation_fields`` system table.
"""

from __future__ import annotations

from table_engine.lsm.merge_engines.aggregation import AggregateMerge, aggregation_fields
from table_engine.lsm.merge_engines.config import MergeConfig
from table_engine.lsm.merge_engines.deduplicate import DeduplicateMerge
from table_engine.lsm.merge_engines.first_row import FirstRowMerge
from table_engine.lsm.merge_engines.function import (
    MergeCapabilities,
    MergeFunction,
    MovedKey,
    sort_and_merge,
)
from table_engine.lsm.merge_engines.partial_update import PartialUpdateMerge
from table_engine.lsm.merge_engines.registry import (
    ENGINES,
    EngineEntry,
    check_engine_options,
    create_merge_function,
    validate_merge_engine,
)

__all__ = ["ENGINES", "AggregateMerge", "DeduplicateMerge", "EngineEntry", "FirstRowMerge", "MergeCapabilities",
           "MergeConfig", "MergeFunction", "MovedKey", "PartialUpdateMerge", "aggregation_fields",
           "check_engine_options", "create_merge_function", "sort_and_merge", "validate_merge_engine"]
