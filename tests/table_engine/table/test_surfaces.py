"""The Table facade (table_engine/table/, ADR 0043): one class over the store handle, at most 45 public names, each
listed once in the map of Table's docstring and in the README's Python API table under the same group; the modules
beside it stay small; a Table is one picklable class whose views are Tables."""

from __future__ import annotations

import inspect
import pathlib
import pickle
import re

import pyarrow as pa

from table_engine import Catalog
from table_engine.table import Table
from table_engine.table.guards import is_mutating
from table_engine.table.reading import read_optimized_view

ROOT = pathlib.Path(__file__).resolve().parents[3]
MAX_PUBLIC_NAMES = 45
"""ADR 0043: Java's Table has about 35, pyiceberg's 41 plus namespaces."""
NAMESPACES = frozenset({"maintenance", "data_evolution", "row_level"})
"""Names that open a namespace of methods (ADR 0043's amendment of 2026-12-08): counted apart, at most these."""
MAX_METHODS = MAX_PUBLIC_NAMES - 2
"""The other names: no more than when the second namespace came (a new one comes with one removed)."""


def class_names() -> set[str]:
    return {n for n in dir(Table) if not n.startswith("_")}


def instance_names(tmp_path: pathlib.Path) -> set[str]:
    table = Catalog(str(tmp_path)).create_table("db.t", schema=pa.schema([("id", pa.int64())]))
    return {n for n in vars(table) if not n.startswith("_")}


def docstring_groups(names: set[str]) -> dict[str, set[str]]:
    """``- group: ``a``, ``b``...`` blocks of Table's docstring -> the names of ``names`` each lists."""
    doc = inspect.getdoc(Table) or ""
    groups = {}
    for block in ("\n" + doc.split("\n\n")[1]).split("\n- ")[1:]:
        group, _, rest = block.partition(":")
        groups[group.strip()] = set(re.findall(r"``([a-z_]+)``", rest)) & names
    return groups


def readme_groups(names: set[str]) -> dict[str, set[str]]:
    """The rows of the README's Python API table -> the names of ``names`` each lists."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("| group | names |") + 2
    groups = {}
    for line in lines[start:]:
        if not line.startswith("| "):
            break
        group, listed = (c.strip() for c in line.strip("|").split("|"))
        groups[group] = set(re.findall(r"`([a-z_]+)`", listed)) & names
    return groups


def test_table_is_one_class_with_at_most_45_public_names() -> None:
    assert Table.__mro__ == (Table, object)
    names = class_names()
    assert NAMESPACES <= names
    assert len(names - NAMESPACES) <= MAX_METHODS, sorted(names - NAMESPACES)
    assert len(names) <= MAX_PUBLIC_NAMES + 1, sorted(names)


def test_the_docstring_map_and_the_readme_list_each_name_once_in_the_same_group(tmp_path: pathlib.Path) -> None:
    names = class_names() | instance_names(tmp_path)
    doc, readme = docstring_groups(names), readme_groups(names)
    assert doc == readme
    listed = [n for members in doc.values() for n in members]
    assert sorted(listed) == sorted(names)  # every name, in one group only


def test_the_modules_of_the_table_package_stay_small() -> None:
    for path in (ROOT / "table_engine" / "table").glob("*.py"):
        assert len(path.read_text().splitlines()) < 600, path.name


def test_a_table_pickles_as_one_class_and_its_views_are_tables(tmp_path: pathlib.Path) -> None:
    table = Catalog(str(tmp_path)).create_table(
        "db.t", schema=pa.schema([("id", pa.int64()), ("v", pa.string())]), primary_keys=["id"],
        options={"bucket": "1"})
    table.write(pa.table({"id": [1], "v": ["a"]}))
    copy = pickle.loads(pickle.dumps(table))
    assert type(copy) is Table
    assert copy.read().to_pylist() == [{"id": 1, "v": "a"}]
    ro = read_optimized_view(table)
    assert type(ro) is Table and ro.read_only and ro.view == "ro" and not table.read_only
    assert type(table.copy({"scan.snapshot-id": "1"})) is Table
    assert is_mutating(Table.write) and not is_mutating(Table.read)
    assert is_mutating(type(table.maintenance).compact) and is_mutating(type(table.data_evolution).update_by_row_id)
