"""The options registry: Paimon keys and defaults, parsing, validation errors, generated docs."""

from __future__ import annotations

import pathlib

import pytest

from table_engine.core_options import (
    IMMUTABLE_OPTIONS,
    CoreOptions,
    MergeEngine,
    render_markdown,
    validate_options,
)
from table_engine.errors import OptionError

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "options.md"


def test_docs_are_generated_from_the_registry() -> None:
    assert DOCS.read_text() == render_markdown(), (
        "docs/options.md is stale: run `python -m table_engine.core_options --markdown > docs/options.md`")


def test_paimon_defaults() -> None:
    o = CoreOptions({})
    assert o.bucket() == -1
    assert o.merge_engine() == "deduplicate"
    assert o.changelog_producer().value == "none"
    assert o.snapshot_num_retained_min() == 10
    assert o.snapshot_num_retained_max() == 2**31 - 1
    assert o.snapshot_time_retained() == 3_600_000
    assert o.snapshot_expire_limit() == 50
    assert o.commit_max_retries() == 10
    assert o.manifest_merge_min_count() == 30
    assert o.manifest_target_file_size() == 8 * 1024 * 1024
    assert o.num_sorted_runs_compaction_trigger() == 5
    assert o.num_sorted_runs_stop_trigger() == 8
    assert o.num_levels() == 6
    assert o.write_buffer_size() == 256 * 1024 * 1024
    assert o.stats_mode() == "truncate(16)"
    assert o.target_file_size(True) == 128 * 1024 * 1024
    assert o.target_file_size(False) == 256 * 1024 * 1024
    assert o.dynamic_bucket_target_row_num() == 2_000_000
    assert o.dynamic_partition_overwrite() is True
    assert "bucket" in IMMUTABLE_OPTIONS and "merge-engine" in IMMUTABLE_OPTIONS


@pytest.mark.parametrize(("raw", "expected"), [
    ({"snapshot.time-retained": "30 min"}, 1_800_000),
    ({"snapshot.time-retained": "1 d"}, 86_400_000),
    ({"snapshot.time-retained": "10s"}, 10_000),
    ({"snapshot.time-retained": "500 ms"}, 500),
    ({"snapshot.time-retained": "2 h"}, 7_200_000),
])
def test_durations(raw: dict[str, str], expected: int) -> None:
    assert CoreOptions(raw).snapshot_time_retained() == expected


def test_memory_sizes_enums_bools() -> None:
    o = CoreOptions({"write-buffer-size": "64 kb", "target-file-size": "1GB", "merge-engine": "Partial-Update",
                     "ignore-delete": "TRUE"})
    assert o.write_buffer_size() == 64 * 1024
    assert o.target_file_size(True) == 1024**3
    assert o.merge_engine() == MergeEngine.PARTIAL_UPDATE.value
    assert o.ignore_delete() is True


def test_fallback_key() -> None:
    assert CoreOptions({"first-row.ignore-delete": "true"}).ignore_delete() is True


@pytest.mark.parametrize(("raw", "message"), [
    ({"bukcet": "4"}, "bukcet.*Did you mean 'bucket'"),
    ({"bucket": "four"}, "four.*bucket"),
    ({"merge-engine": "dedup"}, "merge-engine.*dedup"),
    ({"snapshot.time-retained": "soon"}, "soon.*snapshot.time-retained"),
    ({"metadata.stats-mode": "truncate"}, "metadata.stats-mode"),
])
def test_validation_names_the_option(raw: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        validate_options(raw)


def test_patterns_and_other_components_accepted() -> None:
    validate_options({"fields.price.aggregate-function": "sum", "fields.a,b.sequence-group": "c",
                      "file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.fpp": "0.01",
                      "path": "/x", "spark.sql.foo": "1", "metadata.stats-mode": "full", "hive.sample-prop": "x"})
