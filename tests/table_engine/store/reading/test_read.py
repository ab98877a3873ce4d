"""The merge of files with disjoint sequence ranges (``_newest_wins``): each key's row comes from the newest file
holding it, against a dictionary model, for one key column (one hash pass) and several (anti-joins)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.store.reading.read import _newest_wins
from tests.budget import examples

KEYS = st.one_of(st.integers(-5, 40), st.text("abc", max_size=3))


@st.composite
def runs(draw: Any) -> tuple[list[SimpleNamespace], list[pa.Table]]:
    """Files in a random sequence order, each with distinct keys of one type and a value naming its file."""
    strings = draw(st.booleans())
    keys = st.text("abc", max_size=3) if strings else st.integers(-5, 40)
    n = draw(st.integers(1, 5))
    seqs = draw(st.permutations(range(n)))
    files, tables = [], []
    for i in range(n):
        ks = draw(st.lists(keys, unique=True, max_size=12))
        files.append(SimpleNamespace(max_sequence_number=seqs[i] * 100 + 99, min_sequence_number=seqs[i] * 100))
        tables.append(pa.table({"k": pa.array(ks, pa.string() if strings else pa.int64()),
                                "c": pa.array([1] * len(ks), pa.int8()), "v": pa.array([i] * len(ks), pa.int32())}))
    return files, tables


def model(files: list[SimpleNamespace], tables: list[pa.Table]) -> dict[Any, int]:
    newest: dict[Any, tuple[int, int]] = {}
    for f, t in zip(files, tables, strict=True):
        for k, v in zip(t.column("k").to_pylist(), t.column("v").to_pylist(), strict=True):
            if k not in newest or newest[k][0] < f.max_sequence_number:
                newest[k] = (f.max_sequence_number, v)
    return {k: v for k, (_, v) in newest.items()}


@settings(max_examples=examples(150), deadline=None)
@given(runs(), st.booleans())
def test_newest_file_wins_for_one_and_several_key_columns(data: Any, dictionary: bool) -> None:
    files, tables = data
    if dictionary:  # a key column read dictionary-encoded: its codes follow its dictionary, not first appearance
        tables = [t.set_column(0, "k", t.column("k").dictionary_encode()) for t in tables]
    want = model(files, tables)
    for keys in (["k"], ["k", "c"]) if not dictionary else (["k"],):  # (the engine reads keys undecoded)
        got = _newest_wins(files, tables, keys)  # type: ignore[arg-type]
        pairs = list(zip(got.column("k").to_pylist(), got.column("v").to_pylist(), strict=True))
        assert len(pairs) == len({k for k, _ in pairs}), pairs  # one row per key
        assert dict(pairs) == want
