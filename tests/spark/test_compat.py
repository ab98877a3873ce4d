"""Spark 3.5 and 4.x: the application's commands need nothing from Spark 4; the ``paimon`` data source says in one
error that it does. (The application itself runs on a real pyspark 3.5 in ``make test-compat``.)"""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

from table_engine.errors import UnsupportedError
from table_engine.spark import compat, register

pytestmark = pytest.mark.spark

SPARK_DIR = pathlib.Path(__file__).resolve().parents[2] / "table_engine" / "spark"
DATA_SOURCE_API = "pyspark.sql.datasource"
# the modules the application's commands run (app.py, the jobs' runner and driver_jobs, and what they import), by
# their names under table_engine.spark
APPLICATION = ("app", "jobs.driver_jobs", "jobs.run")


def top_level_imports(module: str) -> set[str]:
    """The modules ``table_engine.spark.<module>`` imports when it is imported (not inside functions)."""
    tree = ast.parse(_path(module).read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` / `if __package__ ...` blocks
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _path(module: str) -> pathlib.Path:
    """The file of ``table_engine.spark.<module>`` (a dotted name below the package)."""
    return SPARK_DIR.joinpath(*module.split(".")).with_suffix(".py")


def closure(roots: tuple[str, ...]) -> set[str]:
    """``table_engine.spark`` modules imported at module level from ``roots``, transitively."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for imported in top_level_imports(name):
            sub = imported.removeprefix("table_engine.spark.")
            if imported.startswith("table_engine.spark.") and _path(sub).is_file():
                todo.append(sub)
    return seen


def test_the_application_imports_no_spark_4_api_at_module_level() -> None:
    modules = closure(APPLICATION)
    assert {"jobs.run", "datasource.writer", "jobs.map_write", "datasource.spark_types"} <= modules
    spark4 = sorted(m for m in modules if any(i.startswith(DATA_SOURCE_API) for i in top_level_imports(m)))
    assert spark4 == [], f"imported by the application, need Spark 4 at import: {spark4}"
    # the data source's modules do need it (so they stay out of the application's imports)
    assert any(i.startswith(DATA_SOURCE_API) for i in top_level_imports("datasource.source"))


def test_on_spark_3_5_the_data_source_says_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyspark

    assert compat.has_data_sources() == (int(pyspark.__version__.split(".")[0]) >= 4)
    monkeypatch.setitem(sys.modules, DATA_SOURCE_API, None)  # as on pyspark 3.5: the module does not exist
    assert not compat.has_data_sources()
    with pytest.raises(UnsupportedError) as err:
        register(None)  # type: ignore[arg-type]  # refused before the session is used
    message = str(err.value)
    assert "\n" not in message
    assert 'the "paimon" data source (format("paimon")' in message and "needs Spark 4.0 or later" in message
    assert "write_dataframe" in message and "application's commands" in message
