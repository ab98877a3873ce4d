"""``consume-changelog``'s guards (:func:`table_engine.ops.consume.prepare`), which every runner takes: the changes of
a data-evolution table are refused before anything is written or the consumer moves (tests/spark/
test_data_evolution.py holds the Spark runner to the same)."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import UnsupportedTableFeatureError
from table_engine.ops import ConsumeChangelog
from table_engine.ops.consume import consume_changelog

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64())])
REFUSED = r"table db\.de uses data-evolution\.enabled .* not support for consume-changelog"


def data_evolution_source(warehouse: str, out: pathlib.Path) -> list[ConsumeChangelog]:
    """A data-evolution table ``db.de`` with two snapshots, a target table, and the consume-changelog commands of
    both kinds (into files under ``out``, into the target) that read its changes."""
    catalog = Catalog(warehouse)
    t = catalog.create_table("db.de", SCHEMA, options={"row-tracking.enabled": "true",
                                                       "data-evolution.enabled": "true"})
    for i in (1, 2):
        t.write(pa.table({"id": pa.array([i], pa.int64()), "a": pa.array([i], pa.int64())}))
    catalog.create_table("db.target", SCHEMA)
    return [ConsumeChangelog(warehouse=warehouse, table="db.de", consumer_id="c", output=str(out)),
            ConsumeChangelog(warehouse=warehouse, table="db.de", consumer_id="c", target_table="db.target")]


def assert_untouched(warehouse: str, out: pathlib.Path) -> None:
    catalog = Catalog(warehouse)
    assert catalog.get_table("db.de").consumers() == {}
    assert catalog.get_table("db.target").latest_snapshot_id() is None
    assert not out.exists()


def test_the_changes_of_a_data_evolution_table_are_refused(warehouse: str, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "changes"
    for cmd in data_evolution_source(warehouse, out):
        with pytest.raises(UnsupportedTableFeatureError, match=REFUSED):
            consume_changelog(cmd, Catalog(warehouse))
    assert_untouched(warehouse, out)
