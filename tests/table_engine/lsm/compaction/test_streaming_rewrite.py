"""Streamed compaction equals in-memory compaction: the rewriter with :class:`Streaming` (runs read in chunks of 1-3
rows, output rolled at a few hundred bytes) writes the same rows as the rewriter without it, for every merge engine,
any split of the records into sorted runs and files, and with or without dropping deletes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import DataError
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.compaction.rewriter import CompactResult, CompactRewriter, Streaming
from table_engine.lsm.compaction.universal import CompactUnit
from table_engine.lsm.key_value import VALUE_KIND
from table_engine.lsm.sort import MergeOrder, concat_tables
from tests.budget import examples
from tests.table_engine.lsm._files import CODEC, MemoryFiles
from tests.table_engine.lsm.merge_engines.test_properties import CASE_IDS, CASES, Case, _merge_function, _records
from tests.table_engine.lsm.test_streaming_merge import adds_as_inserts, chunks_of, make_runs

MIN_SIZE = 100
MAX_LEVEL = 5


def output_rows(fs: MemoryFiles, result: CompactResult) -> list[dict[str, Any]]:
    tables = [fs.read(f) for f in result.after]
    if not tables:
        return []
    t = concat_tables(tables)
    return adds_as_inserts(t.take(pa.compute.sort_indices(t, [("k", "ascending")])))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streamed_compaction_equals_in_memory_compaction(case: Case, data: st.DataObject) -> None:
    records = data.draw(_records(case, max_size=30))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(records) - 1)), max_size=4))))
    fn = _merge_function(case)
    order = MergeOrder(("k",), case.spec.sequence_fields, case.spec.descending)
    try:
        runs = make_runs(case, fn, order, records, cuts)
    except DataError:
        return
    fs = MemoryFiles()
    files: list[DataFileMeta] = []
    for i, run in enumerate(runs):  # oldest run highest; each run in one or more key-disjoint files
        level = len(runs) - i if len(runs) > 1 else 0
        step = data.draw(st.integers(1, max(1, run.num_rows)))
        for start in range(0, run.num_rows, step):
            files.append(fs.add(run.slice(start, step), level=min(level, MAX_LEVEL - 1),
                                size=data.draw(st.sampled_from([10, 500]))))
    unit = CompactUnit(MAX_LEVEL, tuple(files))
    drop_delete = data.draw(st.booleans())
    chunk = data.draw(st.integers(1, 3))
    target = data.draw(st.sampled_from([1, 200, 1 << 20]))

    def read_chunks(f: DataFileMeta) -> Iterator[pa.Table]:
        return chunks_of(fs.read(f), chunk)

    def rewriter(streaming: Streaming | None) -> CompactRewriter:
        return CompactRewriter(CODEC, fs.read, fs.write, fn, order, MIN_SIZE, MAX_LEVEL, streaming=streaming)

    try:
        want = rewriter(None).compact(unit, drop_delete)
    except DataError:
        with pytest.raises(DataError):
            rewriter(Streaming(read_chunks, target)).compact(unit, drop_delete)
        return
    got = rewriter(Streaming(read_chunks, target)).compact(unit, drop_delete)
    assert sorted(f.file_name for f in got.before) == sorted(f.file_name for f in want.before)
    assert output_rows(fs, got) == output_rows(fs, want)
    assert all(f.level == MAX_LEVEL for f in got.after)
    if drop_delete:
        assert all(r[VALUE_KIND] in (0, 2) for f in got.after for r in fs.read(f).to_pylist())
