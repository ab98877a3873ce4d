"""The capabilities each merge engine states (what the store may rely on), the registry, and the engine-owned option
checks. The store-side effects are tested where they act: file-index skipping (store/indexes/test_file_index_scan.py),
lookup compaction and level-0 skipping (store/writing/test_first_row.py), cross-partition upserts
(store/writing/test_cross_partition.py), the merge function built once per table (store/test_context.py)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog, OptionError
from table_engine.core_enums import MergeEngine
from table_engine.format.schema_file import TableSchema
from table_engine.lsm.key_value import RowKind
from table_engine.lsm.merge_engines import (
    ENGINES,
    AggregateMerge,
    DeduplicateMerge,
    FirstRowMerge,
    MergeCapabilities,
    MovedKey,
    PartialUpdateMerge,
    create_merge_function,
)
from table_engine.lsm.merge_engines.function import ALL_CHANGES, INSERT_ONLY

SCHEMA = pa.schema([("k", pa.int32()), ("s", pa.int64()), ("v", pa.string())])


def _schema(catalog: Catalog, **options: str) -> TableSchema:
    return catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1", **options}).schema


def _caps(catalog: Catalog, **options: str) -> MergeCapabilities:
    return create_merge_function(_schema(catalog, **options)).capabilities


def test_every_merge_engine_value_is_registered() -> None:
    assert set(ENGINES) == set(MergeEngine)


@pytest.mark.parametrize(("engine", "cls"), [
    ("deduplicate", DeduplicateMerge), ("partial-update", PartialUpdateMerge), ("aggregation", AggregateMerge),
    ("first-row", FirstRowMerge),
])
def test_the_registry_builds_each_engine(catalog: Catalog, engine: str, cls: type) -> None:
    assert isinstance(create_merge_function(_schema(catalog, **{"merge-engine": engine})), cls)


def test_deduplicate(catalog: Catalog) -> None:
    caps = _caps(catalog)
    assert caps == MergeCapabilities(merge_free=True, needs_lookup=False, first_wins=False,
                                     changelog_kinds=ALL_CHANGES, newest_wins=True, ignore_delete=False,
                                     moved_key=MovedKey.DELETE_AND_INSERT)
    assert caps.newest_file_wins and not caps.insert_only_changelog
    assert caps.changelog_kinds == frozenset(RowKind)


def test_deduplicate_with_sequence_field_needs_the_old_values(catalog: Catalog) -> None:
    caps = _caps(catalog, **{"sequence.field": "s"})
    assert caps.merge_free  # the merged row is still one stored record
    assert not caps.newest_wins and not caps.newest_file_wins


def test_deduplicate_with_ignore_delete_reads_by_merging(catalog: Catalog) -> None:
    caps = _caps(catalog, **{"ignore-delete": "true"})
    assert caps.ignore_delete and caps.merge_free
    assert caps.newest_wins  # compaction: the newest version decides, as before
    assert not caps.newest_file_wins  # a -D in the newest file must not hide the older row


def test_first_row(catalog: Catalog) -> None:
    caps = _caps(catalog, **{"merge-engine": "first-row"})
    assert caps.merge_free and caps.needs_lookup and caps.first_wins
    assert caps.changelog_kinds == INSERT_ONLY and caps.insert_only_changelog
    assert not caps.newest_wins and not caps.newest_file_wins
    assert caps.moved_key is MovedKey.IGNORE
    assert not ENGINES[MergeEngine.FIRST_ROW].deletion_vectors


@pytest.mark.parametrize("engine", ["partial-update", "aggregation"])
def test_combining_engines(catalog: Catalog, engine: str) -> None:
    caps = _caps(catalog, **{"merge-engine": engine, "ignore-delete": "true"})
    assert not caps.merge_free  # a merged row combines records: file-index skipping must not drop sections
    assert not caps.needs_lookup and not caps.first_wins and not caps.newest_wins
    assert caps.changelog_kinds == ALL_CHANGES
    assert caps.moved_key is MovedKey.UPDATE_OLD
    assert caps.ignore_delete
    assert ENGINES[MergeEngine(engine)].deletion_vectors


def test_dynamic_options_change_the_merge_function(catalog: Catalog) -> None:
    schema = _schema(catalog)
    fn = create_merge_function(schema, options={**schema.options, "ignore-delete": "true"})
    assert fn.capabilities.ignore_delete
    assert not create_merge_function(schema, options=schema.options).capabilities.ignore_delete


@pytest.mark.parametrize("primary_keys", [["k"], []], ids=["primary-key", "append"])
def test_first_row_rejects_deletion_vectors(catalog: Catalog, primary_keys: list[str]) -> None:
    options = {"merge-engine": "first-row", "deletion-vectors.enabled": "true"}
    if not primary_keys:
        options["bucket"] = "-1"
    with pytest.raises(OptionError, match="deletion-vectors.enabled = true cannot be used with merge-engine "
                                          "first-row"):
        catalog.create_table("db.t", SCHEMA, primary_keys=primary_keys, options=options)
    assert not catalog.table_exists("db.t")


def test_first_row_rejects_deletion_vectors_as_dynamic_option(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"merge-engine": "first-row"})
    with pytest.raises(OptionError, match="merge-engine first-row"):
        t.copy({"deletion-vectors.enabled": "true"})
