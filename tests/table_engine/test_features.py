"""The capability gate: its registry (one entry per feature, the generated docs/compatibility.md), its decisions
(:func:`require`), its error, and the gate on tables whose metadata was edited to show a feature: refused operations
raise before any file changes; allowed reads read."""

from __future__ import annotations

import json
import pathlib
import pickle
import re
from dataclasses import replace

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import UnsupportedError, UnsupportedTableFeatureError, is_retryable
from table_engine.features import CATALOGS, FEATURES, Op, feature, render_markdown, require
from table_engine.format.feature_detection import data_file_features
from table_engine.table import Table
from table_engine.table.guards import check_files
from tests.table_engine.test_cli_errors import state

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "compatibility.md"


def test_docs_are_generated_from_the_registry() -> None:
    assert DOCS.read_text() == render_markdown(), (
        "docs/compatibility.md is stale: run `python -m table_engine.features > docs/compatibility.md`")


def test_the_registry_names_each_feature_once_with_a_version_and_a_note() -> None:
    names = [f.name for f in FEATURES]
    assert len(names) == len(set(names))
    for f in FEATURES:
        assert re.fullmatch(r"\d+\.\d+|\?", f.since), f
        assert f.note and f.how, f
        assert (f.option_key is None) or f.detected.name in ("OPTION", "TYPE", "INDEX"), f


def test_the_catalog_rows_name_tests_that_exist() -> None:
    root = DOCS.parents[1]
    assert len({c.catalog for c in CATALOGS}) == len(CATALOGS)
    for c in CATALOGS:
        assert c.with_java and c.tests, c
        assert all((root / t).exists() for t in c.tests), c


def test_the_features_other_helpers_build_are_supported() -> None:
    for name in ("file.format = orc / avro", "bucket = -2 (postpone bucket)", "data-file.external-paths",
                 "snapshot properties"):
        assert all(feature(name).supports(op) for op in Op), name


def test_require_names_the_most_restrictive_feature_and_what_is_still_possible() -> None:
    found = {"bucket-function.type": "option 'bucket-function.type' = 'mod'",
             "data-file.thin-mode": "option 'data-file.thin-mode' = 'true'"}
    require("db.t", {"bucket-function.type": "x"}, Op.READ)  # read-only feature: reads pass
    with pytest.raises(UnsupportedTableFeatureError) as info:
        require("db.t", found, Op.READ)
    e = info.value
    assert (e.feature, e.since, e.operation, e.still, e.also) == ("data-file.thin-mode", "1.2", "read", "", ())
    assert str(e) == ("table db.t uses data-file.thin-mode (option 'data-file.thin-mode' = 'true'), a feature of "
                      "Paimon 1.2 that this engine does not support for read: the engine can only show this table's "
                      "metadata (schema, snapshots, options)")
    with pytest.raises(UnsupportedTableFeatureError,
                       match=r"uses data-file.thin-mode .* it also uses bucket-function.type$"):
        require("db.t", found, Op.WRITE)
    for op in Op:  # BLOB columns (ADR 0018, amended) are read, written and maintained
        require("db.t", {"BLOB": "type BLOB"}, op)
    with pytest.raises(UnsupportedTableFeatureError, match="for maintain: the engine can only read this table$"):
        require("db.t", {"pk-<type>.index.columns": "option 'pk-btree.index.columns'"}, Op.MAINTAIN)
    for op in Op:  # global indexes over row ids (ADR 0019) are kept by every operation
        require("db.t", {"global index": "index-manifest entry of type btree"}, op)
    for op in Op:  # row tracking (issue 23) is supported for everything
        require("db.t", {"row-tracking.enabled": "x", "nextRowId": "y", "_FIRST_ROW_ID": "z"}, op)


def test_the_error_is_one_line_not_retryable_and_pickles() -> None:
    e = UnsupportedTableFeatureError("db.t", "VECTOR", "1.4", "write", "", "type VECTOR", ("x",))
    assert isinstance(e, UnsupportedError) and not is_retryable(e) and "\n" not in str(e)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is UnsupportedTableFeatureError and str(back) == str(e)


# ---- the gate on engine tables whose metadata shows a feature ----------------------------------------------------

def _table(warehouse: str) -> Table:
    t = Catalog(warehouse).create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                        options={"bucket": "-1"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    t.write(pa.table({"id": [3], "v": ["c"]}))
    return t


def _edit_json(path: pathlib.Path, **fields: object) -> None:
    data = json.loads(path.read_text())
    for k, v in fields.items():
        if isinstance(v, dict) and isinstance(data.get(k), dict):
            data[k].update(v)
        else:
            data[k] = v
    path.write_text(json.dumps(data, indent=2))


def test_a_read_only_option_allows_reads_and_refuses_everything_else(warehouse: str) -> None:
    t = _table(warehouse)
    _edit_json(pathlib.Path(t.path) / "schema" / "schema-0", options={"metadata.iceberg.storage": "hive-catalog"})
    t = Catalog(warehouse).get_table("db.t")
    before = state(warehouse)
    assert sorted(t.read().column("id").to_pylist()) == [1, 2, 3]
    assert t.copy({"scan.snapshot-id": "1"}).read().num_rows == 2
    for call in (lambda: t.write(pa.table({"id": [4], "v": ["d"]})), lambda: t.maintenance.compact(full=True),
                 lambda: t.expire_snapshots(), lambda: t.create_tag("x"),
                 lambda: t.maintenance.remove_orphan_files(2**62)):
        with pytest.raises(UnsupportedTableFeatureError,
                           match="uses metadata.iceberg.storage = hive-catalog / rest-catalog .*Paimon 0.9"):
            call()
    assert state(warehouse) == before


def test_an_unknown_option_refuses_reads_too(warehouse: str) -> None:
    t = _table(warehouse)
    _edit_json(pathlib.Path(t.path) / "schema" / "schema-0", options={"future.layout": "v9"})
    t = Catalog(warehouse).get_table("db.t")
    with pytest.raises(UnsupportedTableFeatureError, match="uses unknown table option \\(option 'future.layout'\\)"):
        t.read()
    with pytest.raises(UnsupportedTableFeatureError):
        t.new_stream_scan()


def test_a_snapshot_field_is_checked_for_reads_of_it_and_before_maintenance(warehouse: str) -> None:
    t = _table(warehouse)
    _edit_json(pathlib.Path(t.path) / "snapshot" / "snapshot-2", rowIdRanges=[0, 3])
    before = state(warehouse)
    assert t.read(snapshot_id=1).num_rows == 2  # snapshot 1 has no unknown field
    with pytest.raises(UnsupportedTableFeatureError, match="unknown snapshot field \\(snapshot 2 field 'rowIdRanges'"):
        t.read()
    with pytest.raises(UnsupportedTableFeatureError, match="snapshot 2 field 'rowIdRanges'"):  # incremental
        t.copy({"incremental-between": "1,2"}).read()
    scan = t.copy({"scan.mode": "from-snapshot", "scan.snapshot-id": "2"}).new_stream_scan()
    with pytest.raises(UnsupportedTableFeatureError, match="snapshot 2 field 'rowIdRanges'"):  # streaming
        while scan.plan() is None:
            pass
    with pytest.raises(UnsupportedTableFeatureError, match="for maintain"):
        t.expire_snapshots()
    with pytest.raises(UnsupportedTableFeatureError, match="for write"):  # the commit checks the snapshot it follows
        t.write(pa.table({"id": [4], "v": ["d"]}))
    assert state(warehouse) == before  # the refused commit aborted: the write's files are gone too


def test_an_unknown_data_file_kind_is_refused_when_a_read_plans_it(warehouse: str) -> None:
    t = _table(warehouse)
    files = [f for s in t.plan() for f in s.files]
    assert data_file_features(files) == {}
    renamed = [replace(f, file_name=f.file_name + ".lance") for f in files]
    with pytest.raises(UnsupportedTableFeatureError, match="unknown data-file kind"):
        check_files(t, renamed)
