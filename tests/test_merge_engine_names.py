"""Merge engines own their capabilities: no code outside ``table_engine/lsm/merge_engines`` decides anything by a
merge engine's name (a ``merge-engine`` value, a ``MergeEngine`` member, ``CoreOptions.merge_engine()``) or by the
class of a merge function; it asks the engine's ``MergeCapabilities``. ``core_enums`` declares the values and
``core_options`` the option (it may name ``MergeEngine`` members and ``MERGE_ENGINE``, but decides nothing by them);
option values in configuration (e.g. an example DAG's table options) are not decisions and are allowed."""

from __future__ import annotations

import ast
import pathlib

from table_engine.core_enums import MergeEngine

ROOT = pathlib.Path(__file__).resolve().parents[1]
OWNER = ROOT / "table_engine" / "lsm" / "merge_engines"
EXEMPT = ROOT / "table_engine" / "core_enums.py"
DECLARES_OPTION = ROOT / "table_engine" / "core_options.py"
NAMES = frozenset(e.value for e in MergeEngine)
ENGINE_CLASSES = frozenset({"DeduplicateMerge", "PartialUpdateMerge", "AggregateMerge", "FirstRowMerge"})


def _engine_names_in(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_engine_names_in(e) for e in node.elts)
    while isinstance(node, ast.Attribute):  # MergeEngine.FIRST_ROW, MergeEngine.FIRST_ROW.value
        node = node.value
        if isinstance(node, ast.Name) and node.id == "MergeEngine":
            return True
    return False


def _classes_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in ENGINE_CLASSES} | \
        {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in ENGINE_CLASSES}


def violations(source: str, where: str, declares_option: bool = False) -> list[str]:
    """What in ``source`` decides by a merge engine's name or class (``declares_option``: the module declaring the
    ``merge-engine`` option, which may name its values)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Compare) and any(_engine_names_in(x) for x in [node.left, *node.comparators]):
            out.append(f"{line}: compares a merge-engine name")
        elif isinstance(node, ast.match_case) and _engine_names_in(getattr(node.pattern, "value", ast.Pass())):
            out.append(f"{line}: matches a merge-engine name")
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None \
                and isinstance(node.value, ast.Tuple | ast.List | ast.Set) and _engine_names_in(node.value):
            out.append(f"{line}: keeps a collection of merge-engine names")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "MergeEngine" \
                and not declares_option:
            out.append(f"{line}: uses MergeEngine.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "merge_engine" \
                and not declares_option:
            out.append(f"{line}: reads merge_engine()")
        elif isinstance(node, ast.Name) and node.id == "MERGE_ENGINE" and not declares_option:
            out.append(f"{line}: reads the merge-engine option")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "type") \
                and _classes_in(ast.Module(body=[ast.Expr(a) for a in node.args[1:]], type_ignores=[])):
            out.append(f"{line}: checks the class of a merge function")
    return out


def test_no_engine_name_is_compared_outside_merge_engines() -> None:
    problems: list[str] = []
    for pkg in ("table_engine", "provider", "dags"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path == EXEMPT or OWNER in path.parents:
                continue
            problems += violations(path.read_text(), str(path.relative_to(ROOT)), path == DECLARES_OPTION)
    assert not problems, "\n".join(problems)


def test_the_check_finds_each_kind_of_name_decision() -> None:
    """The decisions this test exists to keep out (each was in store/ once)."""
    found = {
        'merge_free = opts.merge_engine() in _MERGE_FREE_ENGINES': "merge_engine()",
        '_MERGE_FREE_ENGINES = ("deduplicate", "first-row")': "collection",
        'first = engine == "first-row"': "compares",
        'ok = engine in ("partial-update", "aggregation")': "compares",
        'if self.merge_engine is MergeEngine.DEDUPLICATE: pass': "compares",
        'x = MergeEngine.FIRST_ROW': "MergeEngine.FIRST_ROW",
        'dedup = isinstance(fn, DeduplicateMerge) and not fn.ignore_delete': "class",
        'e = opts.get(MERGE_ENGINE)': "merge-engine option",
        'match engine:\n    case "first-row":\n        pass': "matches",
    }
    for source, expected in found.items():
        got = violations(source, "snippet")
        assert got and expected in got[0], (source, got)
    allowed = ['options = {"bucket": "2", "merge-engine": "aggregation"}', 'name = "deduplicate-me"',
               'if fn.capabilities.merge_free: pass']
    for source in allowed:
        assert not violations(source, "snippet"), source
