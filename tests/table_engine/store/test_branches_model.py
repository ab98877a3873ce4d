"""A model test of branches (hypothesis): random writes on main and branches, tags, branches made from tags (or
empty), fast-forwards, compactions, snapshot expiries, rollbacks to tags, tag deletions, branch deletions and
orphan cleanups on any line. After every step every line and every tag of every line reads what a dict model
says, so no file anything references was deleted (a missing file fails the read)."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("v", pa.int64())])
LINES = ("main", "b1", "b2")


@dataclass
class Line:
    """What a line holds: its rows, its tags (name -> (snapshot id, rows)), its snapshot ids."""

    rows: dict[int, int] = field(default_factory=dict)
    tags: dict[str, tuple[int, dict[int, int]]] = field(default_factory=dict)
    snapshots: list[int] = field(default_factory=list)


PICK = st.integers(0, 2)  # a line among those that exist (modulo their number)
OPS = st.one_of(
    st.tuples(st.just("write"), PICK, st.lists(st.integers(0, 5), min_size=1, max_size=3)),
    st.tuples(st.just("write"), PICK, st.lists(st.integers(0, 5), min_size=1, max_size=3)),
    st.tuples(st.just("tag"), PICK),
    st.tuples(st.just("branch"), st.sampled_from(LINES[1:]), st.integers(0, 3)),
    st.tuples(st.just("fast_forward"), PICK),
    st.tuples(st.just("fast_forward"), PICK),
    st.tuples(st.just("compact"), PICK),
    st.tuples(st.just("expire"), PICK),
    st.tuples(st.just("delete_tag"), PICK, st.integers(0, 3)),
    st.tuples(st.just("delete_branch"), PICK),
    st.tuples(st.just("orphans"), PICK),
    st.tuples(st.just("rollback"), PICK, st.integers(0, 3)),
)


class Run:
    """One table and its model."""

    def __init__(self, warehouse: Path) -> None:
        self.catalog = Catalog(str(warehouse))
        self.main = self.catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
        self.model: dict[str, Line] = {"main": Line()}
        self.value = 0
        self.tag_seq = 0
        for op in (("write", 0, [0, 1, 2]), ("tag", 0), ("write", 0, [2, 3])):
            self.apply(op)

    def table(self, line: str) -> Table:
        return self.main if line == "main" else self.main.branch_table(line)

    def apply(self, op: tuple[object, ...]) -> None:  # noqa: PLR0912 - one branch per operation
        kind = op[0]
        if kind == "branch":
            line = str(op[1])
        else:
            existing = sorted(self.model)
            line = existing[int(op[1]) % len(existing)]  # type: ignore[call-overload]
        model = self.model.get(line)
        if kind == "write" and model is not None:
            keys = sorted(set(op[2]))  # type: ignore[call-overload]
            self.value += 1
            self.table(line).write(pa.table({"k": keys, "v": [self.value] * len(keys)}, schema=SCHEMA))
            model.rows.update(dict.fromkeys(keys, self.value))
            model.snapshots.append((model.snapshots[-1] if model.snapshots else 0) + 1)
        elif kind == "tag" and model is not None and model.snapshots:
            self.tag_seq += 1
            name = f"t{self.tag_seq}"
            self.table(line).create_tag(name)
            model.tags[name] = (model.snapshots[-1], dict(model.rows))
        elif kind == "branch" and model is None:
            tags = sorted(self.model["main"].tags)
            pick = int(op[2])  # type: ignore[call-overload]
            if pick < len(tags):  # from a tag of main
                name = tags[pick]
                self.main.create_branch(line, name)
                sid, rows = self.model["main"].tags[name]
                self.model[line] = Line(dict(rows), {name: (sid, dict(rows))}, [sid])
            else:
                self.main.create_branch(line)
                self.model[line] = Line()
        elif kind == "fast_forward" and line != "main" and model is not None and model.snapshots:
            self.main.fast_forward(line)
            main, first = self.model["main"], model.snapshots[0]
            main.rows = dict(model.rows)
            main.tags = {n: t for n, t in main.tags.items() if t[0] < first}
            main.tags.update({n: (s, dict(r)) for n, (s, r) in model.tags.items()})
            main.snapshots = [s for s in main.snapshots if s < first] + list(model.snapshots)
        elif kind == "compact" and model is not None and model.snapshots:
            if self.table(line).maintenance.compact(full=True) is not None:
                model.snapshots.append(model.snapshots[-1] + 1)
        elif kind == "expire" and model is not None:
            self.table(line).expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
            model.snapshots = model.snapshots[-1:]
        elif kind == "delete_tag" and model is not None and model.tags:
            name = sorted(model.tags)[int(op[2]) % len(model.tags)]  # type: ignore[call-overload]
            self.table(line).delete_tag(name)
            del model.tags[name]
        elif kind == "delete_branch" and line != "main" and model is not None:
            self.main.delete_branch(line)
            del self.model[line]
        elif kind == "rollback" and model is not None and model.tags:
            name = sorted(model.tags)[int(op[2]) % len(model.tags)]  # type: ignore[call-overload]
            sid, rows = model.tags[name]
            self.table(line).rollback_to(name)
            model.rows = dict(rows)
            model.snapshots = [s for s in model.snapshots if s < sid] + [sid]
            model.tags = {n: t for n, t in model.tags.items() if t[0] <= sid}
        elif kind == "orphans":
            time.sleep(0.002)
            self.table(line).maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))

    def check(self) -> None:
        assert sorted(self.main.list_branches()) == sorted(n for n in self.model if n != "main")
        for line, model in self.model.items():
            table = self.table(line)
            assert _rows(table) == model.rows, line
            assert sorted(table.list_tags()) == sorted(model.tags), line
            for name, (_, rows) in model.tags.items():
                assert _rows(table.copy({"scan.tag-name": name})) == rows, (line, name)


def _rows(table: Table) -> dict[int, int]:
    d = table.read().to_pydict()
    return dict(zip(d["k"], d["v"], strict=True))


@settings(max_examples=examples(60), deadline=None)
@given(ops=st.lists(OPS, min_size=4, max_size=14))
def test_every_line_and_tag_reads_as_the_model(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        run = Run(Path(d))
        for op in ops:
            run.apply(op)
            run.check()
