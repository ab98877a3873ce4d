"""Evaluating predicates against a data file's index container (Paimon's ``FileIndexPredicate``).

The result of a conjunction of predicates is either ``None`` (the indexes prove nothing: any row may match) or a
roaring bitmap of the rows that may match; an empty bitmap proves that no row of the file matches. Bloom filters
answer ``=`` / ``IN`` with "maybe" or "no"; bitmap and BSI indexes give exact row sets, so predicates on different
columns combine by intersection (``a = 1 AND b = 2`` skips a file where they never hold in the same row).

Row semantics follow the engine's row filter (Arrow): ``!=`` and comparisons never match nulls, ``NOT IN`` matches
nulls unless the list holds None, ``IN`` with None matches nulls, ``0.0 = -0.0``, ``NaN`` is in ``IN (NaN)``.
Whenever a literal cannot be compared exactly in the column's internal domain, the predicate proves nothing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence

from pyroaring import BitMap

from table_engine.errors import CorruptMetadataError
from table_engine.format.file_index.bitmap import BITMAP, BitmapIndexReader
from table_engine.format.file_index.bloom_filter import BLOOM_FILTER, BloomFilterReader
from table_engine.format.file_index.bsi import BSI, BsiIndexReader
from table_engine.format.file_index.format import FileIndexFile
from table_engine.format.file_index.values import Literal, literal_value, value_kind
from table_engine.predicate import Predicate
from table_engine.types import DataType

__all__ = ["FileIndexEvaluator", "IndexResult"]

log = logging.getLogger(__name__)

IndexResult = BitMap | None
"""None: the index proves nothing; a bitmap: the rows that may match (empty: no row matches)."""

_SUPPORTED_OPS = {
    BLOOM_FILTER: frozenset({"=", "in"}),
    BITMAP: frozenset({"=", "!=", "in", "not in", "is null", "is not null"}),
    BSI: frozenset({"=", "!=", "in", "not in", "<", "<=", ">", ">=", "is null", "is not null"}),
}


def _and(a: IndexResult, b: IndexResult) -> IndexResult:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _lossy(t: DataType) -> bool:
    """Whether internal values are floors of finer row values (TIMESTAMP(7..9) stored in nanoseconds)."""
    return t.root in ("TIMESTAMP", "TIMESTAMP_LTZ") and (t.precision if t.precision is not None else 6) > 6


def _as_key(lit: Literal, t: DataType) -> Literal:
    """For lossy columns a literal between two keys still selects the rows of its floored key."""
    return Literal(lit.value, True) if _lossy(t) else lit


class FileIndexEvaluator:
    """Predicates against one index container; ``types`` maps the container's column names to their types."""

    def __init__(self, container: FileIndexFile, types: dict[str, DataType], row_count: int) -> None:
        self.container = container
        self.types = types
        self.row_count = row_count
        self._readers: dict[tuple[str, str], object] = {}

    def candidate_rows(self, predicates: Sequence[Predicate]) -> IndexResult:
        """Rows that may satisfy every predicate (columns named as in the container), or None."""
        result: IndexResult = None
        for p in predicates:
            result = _and(result, self.evaluate(p))
            if result is not None and not result:
                return result
        return result

    def may_match(self, predicates: Sequence[Predicate]) -> bool:
        rows = self.candidate_rows(predicates)
        return rows is None or bool(rows)

    def evaluate(self, p: Predicate) -> IndexResult:
        t = self.types.get(p.column)
        if t is None:
            return None
        result: IndexResult = None
        for index_type in self.container.index_types(p.column):
            if p.op not in _SUPPORTED_OPS.get(index_type, ()):
                continue
            reader = self._reader(p.column, index_type, t)
            if reader is None:
                continue
            try:
                if isinstance(reader, BloomFilterReader):
                    r = self._bloom(reader, p, t)
                elif isinstance(reader, BitmapIndexReader):
                    r = self._bitmap(reader, p, t)
                elif isinstance(reader, BsiIndexReader):
                    r = self._bsi(reader, p, t)
                else:  # pragma: no cover - exhaustive
                    r = None
            except CorruptMetadataError as e:
                log.warning("ignoring unreadable %s index of column %r in %s: %s", index_type, p.column,
                            self.container.source, e)
                r = None
            result = _and(result, r)
            if result is not None and not result:
                break
        return result

    def _reader(self, column: str, index_type: str, t: DataType) -> object | None:
        key = (column, index_type)
        if key in self._readers:
            return self._readers[key]
        data = self.container.get(column, index_type)
        reader: object | None = None
        kind = value_kind(t)
        if isinstance(data, bytes) and kind is not None:
            try:
                if index_type == BLOOM_FILTER:
                    reader = BloomFilterReader(data, kind)
                elif index_type == BITMAP:
                    reader = BitmapIndexReader(data, kind)
                elif index_type == BSI:
                    reader = BsiIndexReader(data)
            except (CorruptMetadataError, ValueError) as e:
                log.warning("ignoring unreadable %s index of column %r in %s: %s", index_type, column,
                            self.container.source, e)
        self._readers[key] = reader
        return reader

    # ---- per index type ----------------------------------------------------------------------------------------
    @staticmethod
    def _literals(values: Sequence[object], t: DataType) -> tuple[list[Literal], bool, bool]:
        """(converted non-null literals, whether None is among the values, whether every value converted)."""
        out: list[Literal] = []
        has_null = False
        complete = True
        for v in values:
            if v is None:
                has_null = True
                continue
            lit = literal_value(v, t)
            if lit is None:
                complete = False
            else:
                out.append(_as_key(lit, t))
        return out, has_null, complete

    def _bloom(self, reader: BloomFilterReader, p: Predicate, t: DataType) -> IndexResult:
        values = [p.value] if p.op == "=" else list(p.value)
        lits, has_null, complete = self._literals(values, t)
        if has_null or not complete or not values:
            return None
        return None if any(reader.may_contain(lit) for lit in lits) else BitMap()

    def _bitmap(self, reader: BitmapIndexReader, p: Predicate, t: DataType) -> IndexResult:
        op = p.op
        if op == "is null":
            return reader.null_rows()
        if op == "is not null":
            return reader.all_rows() - reader.null_rows()
        if op in ("=", "!="):
            return self._bitmap_equal(reader, p, t)
        return self._bitmap_in(reader, p, t)

    @staticmethod
    def _bitmap_equal(reader: BitmapIndexReader, p: Predicate, t: DataType) -> IndexResult:
        """``=`` / ``!=`` on a bitmap index."""
        lit = literal_value(p.value, t)
        if lit is None:
            return None
        if p.op == "=":
            return reader.equal_rows(_as_key(lit, t))
        non_null = reader.all_rows() - reader.null_rows()
        if _is_nan(p.value) or _lossy(t):
            return non_null
        return non_null - reader.equal_rows(lit)

    def _bitmap_in(self, reader: BitmapIndexReader, p: Predicate, t: DataType) -> IndexResult:
        """``in`` / ``not in`` on a bitmap index."""
        lits, has_null, complete = self._literals(list(p.value), t)
        if p.op == "in":
            if not complete:
                return None
            rows = reader.null_rows() if has_null else BitMap()
            for lit in lits:
                rows |= reader.equal_rows(lit)
            return rows
        # not in: every row except those equal to a listed value (nulls too unless None is listed); Arrow's IN
        # compares floats by hash-set identity (-0.0 is not in (0.0)), so only the literal's own key is removed
        rows = reader.all_rows()
        if has_null:
            rows -= reader.null_rows()
        if not _lossy(t):
            for lit in lits:
                if lit.exact:
                    rows -= reader.rows_of(lit.value)
        return rows

    def _bsi(self, reader: BsiIndexReader, p: Predicate, t: DataType) -> IndexResult:
        op = p.op
        non_null = reader.non_null_rows()
        if op == "is null":
            return reader.all_rows() - non_null
        if op == "is not null":
            return non_null
        lossy = _lossy(t)
        if op in ("in", "not in"):
            return self._bsi_in(reader, p, t, non_null, lossy)
        one = literal_value(p.value, t)
        if one is None:
            return None
        assert isinstance(one.value, int)
        if op == "=":
            return _bsi_equal(reader, one, lossy)
        if op == "!=":
            return non_null if lossy else non_null - _bsi_equal(reader, one, lossy)
        return _bsi_range(reader, op, one, lossy)

    def _bsi_in(self, reader: BsiIndexReader, p: Predicate, t: DataType, non_null: BitMap, lossy: bool) -> IndexResult:
        lits, has_null, complete = self._literals(list(p.value), t)
        if p.op == "in":
            if not complete:
                return None
            rows = (reader.all_rows() - non_null) if has_null else BitMap()
            for lit in lits:
                rows |= _bsi_equal(reader, lit, lossy)
            return rows
        rows = reader.all_rows()
        if has_null:
            rows -= reader.all_rows() - non_null
        if not lossy:
            for lit in lits:
                rows -= _bsi_equal(reader, lit, lossy)
        return rows


def _bsi_equal(reader: BsiIndexReader, lit: Literal, lossy: bool) -> BitMap:
    """Rows whose BSI value equals the literal's key; none when the key is not exact (unless the type is lossy)."""
    assert isinstance(lit.value, int)
    return reader.compare("=", lit.value) if lit.exact or lossy else BitMap()


def _bsi_range(reader: BsiIndexReader, op: str, one: Literal, lossy: bool) -> BitMap:
    """Rows of a BSI index matching ``<``, ``<=``, ``>`` or ``>=`` against the literal's (possibly floored) key."""
    assert isinstance(one.value, int)
    v = one.value
    compare: Callable[[str, int], BitMap] = reader.compare
    if op == "<":
        return compare("<", v) if one.exact else compare("<=", v)
    if op == "<=":
        return compare("<=", v)
    if lossy:  # a row value above the literal may still have the literal's (floored) key
        return compare(">=", v)
    if op == ">":
        return compare(">", v)
    return compare(">=", v) if one.exact else compare(">", v)
