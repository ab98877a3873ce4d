"""Reading splits: data files -> (schema-evolved) Arrow tables -> merge-on-read -> projected rows.

Files are read by field id, so renamed, dropped, added and widened columns read correctly from files written
under older schemas. Primary-key splits are merged per section (files with overlapping key ranges); when the
files of a section have disjoint sequence ranges (always true for files written by one writer over time), the
newest version of a key is found with a hash anti-join instead of a full sort.

Deletion vectors of a split's files are applied as soon as a file is read (a boolean keep-mask), before merging,
filtering or projection. Raw splits (deletion-vector tables without level 0) and the read-optimized view read every
file on its own, without merging.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import CorruptMetadataError, SchemaError, UnsupportedTableFeatureError, naming_snapshot
from table_engine.features import feature
from table_engine.format.binary_row import decode_row
from table_engine.format.blob_file import read_blob_file
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.formats import iter_file, read_file
from table_engine.format.schema_file import TableSchema
from table_engine.io.executor import parallel_map
from table_engine.io.file_io import FileIO
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND, is_add
from table_engine.lsm.levels import KeyCodec, interval_partition
from table_engine.lsm.merge_engines import MergeFunction, sort_and_merge
from table_engine.lsm.sort import MergeOrder, concat_tables
from table_engine.lsm.streaming_merge import streaming_merge
from table_engine.predicate import Predicate, check_value_types, conjunction
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import VectorCache
from table_engine.store.paths import file_path_in
from table_engine.store.reading.data_evolution import (
    RowIdGroup,
    column_sources,
    data_evolution_enabled,
    is_blob_file,
    row_id_groups,
)
from table_engine.store.reading.row_tracking import (
    ROW_TRACKING_COLUMNS,
    physical_tracking_columns,
    with_tracking,
)
from table_engine.store.reading.scan import Split
from table_engine.types import VARIANT_ARROW_TYPE, DataField, is_variant_arrow_type, to_arrow_field

_READ_THREADS = min(4, os.cpu_count() or 1)
#: rows per chunk a streaming read (:meth:`TableRead.to_batches`) reads from each data file
STREAM_CHUNK_ROWS = 65536
RELEASE_EVERY_ROWS = 1 << 20
"""Rows :meth:`TableRead.to_batches` yields between two releases of unused Arrow memory."""


@dataclass
class ReadContext:
    """What a reader needs to know about the table (current schema, merge rules, where files live)."""

    file_io: FileIO
    table_path: str
    schema: TableSchema
    schema_loader: Callable[[int], TableSchema]
    merge_function: MergeFunction | None
    sequence_fields: tuple[str, ...] = ()
    sequence_descending: bool = False
    default_partition_name: str = "__DEFAULT_PARTITION__"
    row_tracking: bool = False
    """``row-tracking.enabled``: ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` are readable system columns"""
    data_evolution: bool = False
    """rows are merged from column files by row id (:mod:`.data_evolution`)"""

    def schema_of(self, schema_id: int) -> TableSchema:
        """The schema with id ``schema_id`` (the current one without loading)."""
        return self.schema if schema_id == self.schema.id else self.schema_loader(schema_id)


class TableRead:
    """Reads splits into Arrow data (merged for primary-key tables).

    ``read_optimized``: the splits hold only max-level files of a primary-key table (the ``$ro`` view); their keys
    are unique and they hold no -U/-D records, so they are read without merging.
    """

    def __init__(self, ctx: ReadContext, columns: Sequence[str] | None = None,
                 predicates: Sequence[Predicate] = (), read_optimized: bool = False) -> None:
        self.ctx = ctx
        self.read_optimized = read_optimized
        names = ctx.schema.field_names()
        system_names = list(ROW_TRACKING_COLUMNS) if ctx.row_tracking and not ctx.schema.primary_keys else []
        names = names + [n for n in system_names if n not in names]
        if columns is not None:
            for c in columns:
                if c not in names:
                    raise SchemaError(f"cannot project unknown column {c!r}; columns are {names}")
        self.columns = list(columns) if columns is not None else ctx.schema.field_names()
        self.predicates = list(predicates)
        system_fields = [pa.field(n, pa.int64()) for n in system_names]
        check_value_types(self.predicates, pa.schema([*ctx.schema.arrow_schema(), *system_fields]))
        self.filter_expr = conjunction(self.predicates)
        by_name = {f.name: f for f in system_fields}
        self.output_schema = pa.schema([by_name[c] if c in by_name and c not in ctx.schema.field_names()
                                        else to_arrow_field(ctx.schema.field(c)) for c in self.columns])
        self.has_pk = bool(ctx.schema.primary_keys)
        self.key_cols = tuple(ctx.schema.trimmed_primary_keys()) if self.has_pk else ()
        needed = set(self.columns) | {p.column for p in self.predicates}
        if self.has_pk:
            needed |= set(self.key_cols) | set(ctx.sequence_fields)
            if ctx.merge_function is not None:  # e.g. the sequence fields of partial-update sequence groups
                needed |= ctx.merge_function.read_columns(needed)
        # keep schema order
        self.read_fields = [f for f in ctx.schema.fields if f.name in needed]
        self.tracking = tuple(n for n in system_names if n in needed and n not in ctx.schema.field_names())
        """the row-tracking system columns this read computes (``_ROW_ID``, ``_SEQUENCE_NUMBER``)"""
        self._vectors = VectorCache(ctx.file_io)
        self.chunk_rows = STREAM_CHUNK_ROWS
        """Rows per chunk :meth:`to_batches` reads from each file."""

    # ---- public ------------------------------------------------------------------------------------------------
    def read_split(self, split: Split) -> pa.Table:
        parts = list(self._iter_split(split))
        if not parts:
            return self.output_schema.empty_table()
        return concat_tables(parts)

    def to_arrow(self, splits: Sequence[Split]) -> pa.Table:
        if len(splits) > 1 and _READ_THREADS > 1:
            chunks = parallel_map(lambda s: list(self._iter_split(s)), splits, _READ_THREADS)
            parts = [t for c in chunks for t in c]
        else:
            parts = [t for s in splits for t in self._iter_split(s)]
        if not parts:
            return self.output_schema.empty_table()
        return concat_tables(parts)

    def to_batches(self, splits: Sequence[Split], batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
        """Stream the result in bounded memory: files are read in chunks of :attr:`chunk_rows` rows and the files
        of a merge section are merged by streaming (:func:`~table_engine.lsm.streaming_merge.streaming_merge`),
        so memory is (files of a section) x chunk, whatever the size of the table. The rows are those of
        :meth:`to_arrow`; their order within a split may differ.

        Every :data:`RELEASE_EVERY_ROWS` rows the Arrow memory pool is asked to return what it no longer uses: its
        default allocator (mimalloc) otherwise keeps freed chunks, and a 10 M-row read peaked at 1.43x the RSS of a
        1 M-row read (1.19x with the release; ``make bench-scale``)."""
        pool = pa.default_memory_pool()
        since_release = 0
        for s in splits:
            for t in self._stream_split(s):
                if t.num_rows:
                    yield from t.to_batches(max_chunksize=batch_size)
                    since_release += t.num_rows
                    if since_release >= RELEASE_EVERY_ROWS:
                        pool.release_unused()
                        since_release = 0

    # ---- internals ---------------------------------------------------------------------------------------------
    def _iter_split(self, split: Split) -> Iterator[pa.Table]:
        if not split.files:
            return
        if self._by_row_id(split):
            for group in row_id_groups(split.files):
                yield self._finish(self._read_group(split, group))
            return
        if not self.has_pk:
            for f in sorted(split.files, key=lambda f: f.min_sequence_number):
                yield self._finish(self._read_file(split, f, system=False))
            return
        if self.read_optimized or split.raw:
            for f in split.files:
                t = self._read_file(split, f, system=True, with_seq=False)
                yield self._finish(t.filter(is_add(t.column(VALUE_KIND))))
            return
        for section in self._sections(split.files):
            fast = len(section) == 1 or self._newest_wins_applies(section)
            tables = [self._read_file(split, f, system=True, with_seq=not fast) for f in section]
            yield self._finish(self._merge(section, tables, fast))

    def _stream_split(self, split: Split) -> Iterator[pa.Table]:
        """:meth:`_iter_split` chunk by chunk (bounded memory)."""
        if not split.files:
            return
        if self._by_row_id(split):  # a row-id group at a time (its files' columns)
            yield from self._iter_split(split)
            return
        if not self.has_pk:
            for f in sorted(split.files, key=lambda f: f.min_sequence_number):
                for t in self._iter_file(split, f, system=False):
                    yield self._finish(t)
            return
        if self.read_optimized or split.raw:
            for f in split.files:
                for t in self._iter_file(split, f, system=True, with_seq=False):
                    yield self._finish(t.filter(is_add(t.column(VALUE_KIND))))
            return
        order = MergeOrder(self.key_cols, tuple(self.ctx.sequence_fields), self.ctx.sequence_descending)
        for section in self._run_sections(split.files):
            runs = [self._iter_run(split, run) for run in section]
            fn = self.ctx.merge_function if len(section) > 1 else None
            for t in streaming_merge(runs, order, fn):
                yield self._finish(t.filter(is_add(t.column(VALUE_KIND))))

    def _run_sections(self, files: Sequence[DataFileMeta]) -> list[list[list[DataFileMeta]]]:
        """Key-disjoint sections, each as the fewest sorted runs (key-disjoint files in key order): the streaming
        merge reads one file per run at a time, so memory follows the number of overlapping runs, not of files."""
        try:
            sections = interval_partition(files, KeyCodec([f.type for f in self.ctx.schema.key_fields()]))
        except Exception:  # undecodable or incomparable keys: every file its own run, oldest first
            return [[[f] for f in sorted(files, key=lambda f: f.min_sequence_number)]]
        return [[list(run.files) for run in section] for section in sections]

    def _iter_run(self, split: Split, files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        for f in files:
            yield from self._iter_file(split, f, system=True)

    def _iter_file(self, split: Split, f: DataFileMeta, system: bool, with_seq: bool = True) -> Iterator[pa.Table]:
        """One data file as :meth:`_read_file` reads it, in chunks of :attr:`chunk_rows` rows."""
        with naming_snapshot(split.snapshot_id):
            mask = None
            if split.deletion_files:
                mask = self._vectors.keep_mask(split.deletion_files.get(f.file_name), f.row_count)
            offset = 0
            for t in iter_data_file(self.ctx, self._file_path(split, f), f, self.read_fields, system, with_seq,
                                    self.chunk_rows, self.tracking):
                n = t.num_rows
                if mask is not None:
                    t = t.filter(pa.array(mask[offset:offset + n]))
                offset += n
                yield t

    def _finish(self, t: pa.Table) -> pa.Table:
        if self.filter_expr is not None:
            t = t.filter(self.filter_expr)
        return t.select(self.columns).cast(self.output_schema)

    def _newest_wins_applies(self, files: Sequence[DataFileMeta]) -> bool:
        fn = self.ctx.merge_function
        return (self._disjoint_sequences(files) and not self.ctx.sequence_fields and fn is not None
                and fn.capabilities.newest_file_wins)

    def _merge(self, files: Sequence[DataFileMeta], tables: list[pa.Table], fast: bool) -> pa.Table:
        order = MergeOrder(self.key_cols, tuple(self.ctx.sequence_fields), self.ctx.sequence_descending)
        if len(tables) == 1:
            merged = tables[0]
        elif fast:
            merged = _newest_wins(files, tables, list(self.key_cols))
        else:
            assert self.ctx.merge_function is not None
            in_seq_order = not self.ctx.sequence_fields and self._disjoint_sequences(files)
            if in_seq_order:  # oldest file first: a stable sort by key alone orders each key's records
                tables = [tables[i] for i in sorted(range(len(files)), key=lambda i: files[i].min_sequence_number)]
            merged = sort_and_merge(concat_tables(tables), order, self.ctx.merge_function,
                                    in_sequence_order=in_seq_order)
        merged = merged.filter(is_add(merged.column(VALUE_KIND)))
        return merged

    @staticmethod
    def _disjoint_sequences(files: Sequence[DataFileMeta]) -> bool:
        ordered = sorted(files, key=lambda f: f.min_sequence_number)
        return all(a.max_sequence_number < b.min_sequence_number for a, b in zip(ordered, ordered[1:]))

    def _sections(self, files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
        """Group files whose key ranges overlap (sweep over files sorted by min key)."""
        if len(files) == 1:
            return [list(files)]
        types = [f.type for f in self.ctx.schema.key_fields()]
        try:
            ranges = [(tuple(decode_row(f.min_key, types)), tuple(decode_row(f.max_key, types)), f) for f in files]
            ranges.sort(key=lambda r: r[0])
        except Exception:  # undecodable or incomparable keys: one section
            return [list(files)]
        sections: list[list[DataFileMeta]] = []
        current: list[DataFileMeta] = []
        bound: tuple[object, ...] | None = None
        for lo, hi, f in ranges:
            if current and bound is not None and lo > bound:
                sections.append(current)
                current, bound = [], None
            current.append(f)
            bound = hi if bound is None or hi > bound else bound
        if current:
            sections.append(current)
        return sections

    def _read_file(self, split: Split, f: DataFileMeta, system: bool, with_seq: bool = True) -> pa.Table:
        """One data file, projected to the current schema by field id, its deletion vector applied."""
        with naming_snapshot(split.snapshot_id):
            t = read_data_file(self.ctx, self._file_path(split, f), f, self.read_fields, system, with_seq,
                               self.tracking)
            if split.deletion_files:
                mask = self._vectors.keep_mask(split.deletion_files.get(f.file_name), t.num_rows)
                if mask is not None:
                    t = t.filter(pa.array(mask))
        return t

    def _by_row_id(self, split: Split) -> bool:
        """Whether the split's rows are merged from column files by row id (data evolution)."""
        return not self.has_pk and (self.ctx.data_evolution or any(f.write_cols is not None for f in split.files))

    def _read_group(self, split: Split, group: RowIdGroup) -> pa.Table:
        """The rows of one row-id group of a data-evolution split, its deletion vector applied."""
        fields = self.read_fields or self.ctx.schema.fields[:1]  # no column asked: still count the rows
        with naming_snapshot(split.snapshot_id):
            t = read_row_id_group(self.ctx, group, fields, lambda f: self._file_path(split, f), self.tracking)
            if split.deletion_files:
                mask = self._vectors.keep_mask(split.deletion_files.get(group.anchor.file_name), group.row_count)
                if mask is not None:
                    t = t.filter(pa.array(mask))
        return t

    def _file_path(self, split: Split, f: DataFileMeta) -> str:
        return file_path_in(self.ctx.table_path, self.ctx.schema, split.partition_values, split.bucket, f,
                            self.ctx.default_partition_name)


def read_row_id_group(ctx: ReadContext, group: RowIdGroup, fields: Sequence[DataField],
                      path_of: Callable[[DataFileMeta], str], tracking: Sequence[str] = ()) -> pa.Table:
    """Every row of a row-id group of a data-evolution table (deleted ones too, in row-id order): each of ``fields``
    from the newest file holding it (only those files are opened, each for only its columns), nulls where no file
    holds it; then the row-tracking columns of ``tracking``, which every file holds (as Paimon's
    ``DataEvolutionSplitRead``): from the newest file of the group."""
    columns: dict[str, pa.ChunkedArray] = {}
    sources = column_sources(group, fields, ctx.schema_of)
    newest = group.files[0]
    if tracking and (not sources or sources[0][0][0] is not newest):  # only the tracking columns of the newest file
        path = path_of(newest)
        physical = physical_tracking_columns(ctx.file_io, path, newest, tracking)
        placeholder = pa.table({"_": pa.nulls(group.row_count)})
        raw = read_file(ctx.file_io, path, physical) if physical else placeholder
        t = with_tracking(placeholder, raw, newest, tracking, 0)
        columns.update((name, t.column(name)) for name in tracking)
    for unit, supplied in sources:
        parts = [read_data_file(ctx, path_of(f), f, supplied, system=False, tracking=tracking if f is newest else ())
                 for f in unit]  # one normal file, or the rolled .blob files of one column in row-id order
        t = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
        if t.num_rows != group.row_count:
            raise CorruptMetadataError(f"data file {unit[0].file_name} holds {t.num_rows} rows, its metadata says "
                                       f"{group.row_count}")
        for name in t.column_names:
            columns[name] = t.column(name)
    out_fields = [to_arrow_field(fld).with_nullable(True) for fld in fields]
    arrays = [columns[fld.name] if fld.name in columns else pa.nulls(group.row_count, af.type)
              for fld, af in zip(fields, out_fields, strict=True)]
    out_fields += [pa.field(name, pa.int64()) for name in tracking]
    arrays += [columns[name] for name in tracking]
    return pa.Table.from_arrays(arrays, schema=pa.schema(out_fields))


def read_data_file(ctx: ReadContext, path: str, f: DataFileMeta, read_fields: Sequence[DataField], system: bool,
                   with_seq: bool = True, tracking: Sequence[str] = ()) -> pa.Table:
    """The ``read_fields`` (of the current schema) of one data file, matched by field id across schema versions
    (dropped columns read as nulls); with ``system`` also ``_SEQUENCE_NUMBER`` (if ``with_seq``) and
    ``_VALUE_KIND``; then the row-tracking columns of ``tracking`` (:func:`tracking_columns`)."""
    wanted, file_cols = _file_columns(ctx, f, read_fields, system, with_seq)
    if is_blob_file(f.file_name):  # one BLOB column (its _WRITE_COLS), no system or tracking columns
        if system or f.write_cols is None or len(f.write_cols) != 1:
            raise CorruptMetadataError(f"blob file {f.file_name} must hold exactly one column (_WRITE_COLS "
                                       f"{f.write_cols}) of an append table")
        raw = pa.table({f.write_cols[0]: read_blob_file(ctx.file_io, path, placeholders=False)}) if file_cols else \
            pa.table({"_": pa.nulls(f.row_count)})
        return with_tracking(_project(ctx, raw, wanted, system, with_seq), raw, f, tracking, 0)
    physical = physical_tracking_columns(ctx.file_io, path, f, tracking)
    raw = _read_columns(ctx, path, file_cols + physical)
    return with_tracking(_project(ctx, raw, wanted, system, with_seq), raw, f, tracking, 0)


def iter_data_file(ctx: ReadContext, path: str, f: DataFileMeta, read_fields: Sequence[DataField], system: bool,
                   with_seq: bool = True, batch_rows: int = 65536, tracking: Sequence[str] = ()) -> Iterator[pa.Table]:
    """:func:`read_data_file` in tables of at most ``batch_rows`` rows (read batch by batch: bounded memory)."""
    wanted, file_cols = _file_columns(ctx, f, read_fields, system, with_seq)
    physical = physical_tracking_columns(ctx.file_io, path, f, tracking)
    offset = 0
    columns = file_cols + physical
    lacking = _partition_columns_lacking(ctx, path, columns)
    present = [c for c in columns if c not in lacking]
    for raw in iter_file(ctx.file_io, path, present, batch_rows):
        raw = _with_path_partition(ctx, path, raw, lacking) if lacking else raw
        yield with_tracking(_project(ctx, raw, wanted, system, with_seq), raw, f, tracking, offset)
        offset += raw.num_rows


def _read_columns(ctx: ReadContext, path: str, columns: list[str]) -> pa.Table:
    """The ``columns`` of a data file; partition columns it does not hold from its ``k=v`` directories."""
    lacking = _partition_columns_lacking(ctx, path, columns)
    if not lacking:
        return read_file(ctx.file_io, path, columns)
    raw = read_file(ctx.file_io, path, [c for c in columns if c not in lacking])
    return _with_path_partition(ctx, path, raw, lacking)


def _partition_columns_lacking(ctx: ReadContext, path: str, columns: Sequence[str]) -> list[str]:
    """The partition columns among ``columns`` that the data file does not hold. Files migrated in place from
    Hive-style directories (``migrate-table``) hold none: Paimon Java (``PartitionInfo``) and pypaimon read
    partition columns from the partition, never the file, and so does this reader for such files. Only a file
    whose path shows it (a migrated file keeps no ``data-`` prefix) costs a footer read."""
    keys = ctx.schema.partition_keys
    if not keys or os.path.basename(path).startswith(("data-", "changelog-")) or not any(c in keys for c in columns):
        return []
    from table_engine.format.formats import file_column_names

    held = set(file_column_names(ctx.file_io, path))
    return [c for c in columns if c in keys and c not in held]


def _with_path_partition(ctx: ReadContext, path: str, raw: pa.Table, lacking: Sequence[str]) -> pa.Table:
    """``raw`` with the ``lacking`` partition columns, each the constant its ``k=v`` directory in ``path`` gives."""
    from table_engine.io.paths import unescape_path_name
    from table_engine.store.partition_spec import typed_value

    texts = {}
    for part in path.split("/")[:-1]:
        key, eq, value = part.partition("=")
        if eq:
            texts[unescape_path_name(key)] = unescape_path_name(value)
    for name in lacking:
        if name not in texts:
            raise CorruptMetadataError(f"data file {path} holds no partition column {name!r} and its path has no "
                                       f"{name}=<value> directory")
        fld = ctx.schema.field(name)
        value = typed_value(name, texts[name], fld.type, ctx.default_partition_name)
        raw = raw.append_column(name, pa.array([value] * raw.num_rows, to_arrow_field(fld).type))
    return raw


def _file_columns(ctx: ReadContext, f: DataFileMeta, read_fields: Sequence[DataField], system: bool,
                  with_seq: bool) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(current name, name in the file or None) of each read field, and the file columns to read."""
    file_schema = ctx.schema if f.schema_id == ctx.schema.id else ctx.schema_loader(f.schema_id)
    by_id = file_schema.fields_by_id()
    wanted: list[tuple[str, str | None]] = []  # (current name, name in file)
    for fld in read_fields:
        prev = by_id.get(fld.id)
        wanted.append((fld.name, prev.name if prev is not None else None))
    file_cols = [old for _, old in wanted if old is not None]
    if system:
        file_cols += [SEQUENCE_NUMBER, VALUE_KIND] if with_seq else [VALUE_KIND]
    return wanted, file_cols


def _project(ctx: ReadContext, raw: pa.Table, wanted: Sequence[tuple[str, str | None]], system: bool,
             with_seq: bool) -> pa.Table:
    n = raw.num_rows
    arrays = []
    fields = []
    for (name, old) in wanted:
        target = to_arrow_field(ctx.schema.field(name))
        if old is None:
            arrays.append(pa.nulls(n, target.type))
        else:
            col = raw.column(old)
            if target.type == VARIANT_ARROW_TYPE and not is_variant_arrow_type(col.type):
                shredding = feature("VARIANT shredding")
                raise UnsupportedTableFeatureError(ctx.table_path, shredding.name, shredding.since, "read", "",
                                                   f"column {name!r} stored as {col.type}")
            if col.type != target.type:
                col = col.cast(target.type)
            arrays.append(col)
        fields.append(target.with_nullable(True))
    if system:
        if with_seq:
            arrays.append(raw.column(SEQUENCE_NUMBER))
            fields.append(pa.field(SEQUENCE_NUMBER, pa.int64()))
        arrays.append(raw.column(VALUE_KIND).cast(pa.int8()))
        fields.append(pa.field(VALUE_KIND, pa.int8()))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def read_context(ctx: StoreContext) -> ReadContext:
    """The read context of a table's store context (its merge function and its options' sequence fields)."""
    opts = ctx.options
    return ReadContext(ctx.file_io, ctx.table_path, ctx.schema, ctx.schema_by_id, ctx.merge_function,
                       tuple(opts.sequence_fields()), opts.sequence_descending(), opts.partition_default_name(),
                       opts.row_tracking_enabled(), data_evolution_enabled(ctx.schema.options))


def _newest_wins(files: Sequence[DataFileMeta], tables: list[pa.Table], keys: list[str]) -> pa.Table:
    """Merge files with disjoint sequence ranges (each unique per key): a key's row in the newest file wins."""
    order = sorted(range(len(files)), key=lambda i: files[i].max_sequence_number, reverse=True)
    if len(keys) == 1:  # one hash pass: newest file first, each key's first occurrence is its newest row
        newest_first = concat_tables([tables[i] for i in order])
        if newest_first.num_rows == 0:
            return newest_first
        key = newest_first.column(keys[0])
        if pa.types.is_dictionary(key.type):  # its codes would follow its dictionaries, not first appearance
            key = key.cast(key.type.value_type)
        codes = pc.dictionary_encode(key.combine_chunks()).indices
        return newest_first.filter(pa.array(_first_occurrences(codes.to_numpy(zero_copy_only=False))))
    kept: list[pa.Table] = []
    seen: pa.Table | None = None
    for i in order:
        t = tables[i]
        if seen is not None and t.num_rows:
            t = t.join(seen, keys=keys, join_type="left anti", use_threads=False).select(t.column_names)
        kept.append(t)
        ks = t.select(keys)
        seen = ks if seen is None else pa.concat_tables([seen, ks])
    return concat_tables(kept)


def _first_occurrences(codes: np.ndarray) -> np.ndarray:
    """Where each value of ``codes`` appears first, for dictionary codes numbered in order of first appearance (as
    ``dictionary_encode`` numbers them): a code above every earlier one is new."""
    seen_max = np.maximum.accumulate(codes)
    first = np.empty(len(codes), bool)
    first[:1] = True
    first[1:] = seen_max[1:] > seen_max[:-1]
    return first
