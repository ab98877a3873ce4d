"""The Table facade grouped by surface (table_engine/table/): every public name lives in one surface module, the
map in Table's docstring and the README's Python API table list it there, and a Table stays one picklable class."""

from __future__ import annotations

import inspect
import pathlib
import pickle

import pyarrow as pa

from table_engine import Catalog
from table_engine.table import Table, TableBase
from table_engine.table.base import is_mutating

ROOT = pathlib.Path(__file__).resolve().parents[3]
SURFACES = ("base", "reading", "writing", "maintenance", "tags", "metadata", "branches")
# instance attributes set in TableBase.__init__ / _set_schema (not in any class __dict__)
INSTANCE_ATTRIBUTES = {"identifier": "base", "path": "base", "schema": "base", "options": "base", "file_io": "base",
                       "source": "base", "store": "base"}


def public_names() -> dict[str, str]:
    """Each public name of Table -> the surface module (``table_engine.table.<surface>``) that defines it."""
    out = dict(INSTANCE_ATTRIBUTES)
    for cls in Table.__mro__[1:-1]:
        for name in vars(cls):
            if not name.startswith("_"):
                assert name not in out or out[name] == cls.__module__.rsplit(".", 1)[1], name
                out.setdefault(name, cls.__module__.rsplit(".", 1)[1])
    return out


def test_every_public_name_is_defined_by_one_surface_and_table_adds_none() -> None:
    names = public_names()
    assert {n for n in vars(Table) if not n.startswith("_")} == set()
    assert set(names.values()) == set(SURFACES)
    assert {n for n in dir(Table) if not n.startswith("_")} == set(names) - set(INSTANCE_ATTRIBUTES)


def test_the_docstring_map_and_the_readme_list_each_name_under_its_surface() -> None:
    names = public_names()
    doc = inspect.getdoc(Table) or ""
    doc_lines = {s: next(block for block in doc.split("\n- ") if f"table_engine.table.{s}`" in block)
                 for s in SURFACES}
    readme = (ROOT / "README.md").read_text()
    readme_rows = {s: next(line for line in readme.splitlines() if line.startswith("| ") and f"| `{s}.py` |" in line)
                   for s in SURFACES}
    for name, surface in names.items():
        assert f"``{name}``" in doc_lines[surface], f"{name} not in the docstring map under {surface}"
        assert f"`{name}`" in readme_rows[surface], f"{name} not in the README's Python API row of {surface}.py"


def test_surface_modules_stay_small() -> None:
    for path in (ROOT / "table_engine" / "table").glob("*.py"):
        assert len(path.read_text().splitlines()) < 600, path.name


def test_a_table_pickles_as_one_class_and_its_views_are_tables(tmp_path: pathlib.Path) -> None:
    table = Catalog(str(tmp_path)).create_table(
        "db.t", schema=pa.schema([("id", pa.int64()), ("v", pa.string())]), primary_keys=["id"],
        options={"bucket": "1"})
    table.write(pa.table({"id": [1], "v": ["a"]}))
    copy = pickle.loads(pickle.dumps(table))
    assert type(copy) is Table and isinstance(copy, TableBase)
    assert copy.read().to_pylist() == [{"id": 1, "v": "a"}]
    ro = table.read_optimized_view()
    assert type(ro) is Table and ro.read_only and not table.read_only
    assert type(table.copy({"scan.snapshot-id": "1"})) is Table
    assert is_mutating(Table.write) and not is_mutating(Table.read)
