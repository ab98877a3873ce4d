"""Writing data files of one table: Arrow rows -> Parquet, ORC or Avro files rolled at ``target-file-size`` + their
metadata.

Used by the table writer (level-0 files of flushes, append files) and by compaction (files at the output level).
Primary-key files are laid out as ``_KEY_<k>`` (trimmed primary key), ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, then
every table column; append files hold the table columns only. Files roll when the rows' Arrow size reaches the
target size. The format and compression follow ``file.format`` / ``file.format.per.level`` /
``changelog-file.format`` and their compression options, as Paimon's ``KeyValueFileWriterFactory`` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_options import CHANGELOG_FILE_PREFIX, CHANGELOG_FILE_STATS_MODE
from table_engine.errors import OptionError
from table_engine.format.blob_file import (
    BLOB_FILE_SUFFIX,
    blob_file_cuts,
    encode_blob_records,
    resolve_blob_descriptors,
    write_blob_records,
)
from table_engine.format.data_file import StatsMode, make_file_meta
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.file_index.writer import with_file_index
from table_engine.format.formats import WriteFormat, write_file
from table_engine.io.paths import bucket_dir, new_data_file_name, partition_dir
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND, key_column_name
from table_engine.store.context import StoreContext
from table_engine.store.external_paths import external_path_provider
from table_engine.types import DataField, to_arrow_field


class DataFileWriter:
    """Writes rows of one table (current schema) as data files; thread-safe (no mutable state but ``track`` and an
    idempotent cache of write formats).

    ``track`` is called with each file's path before it is written, so that a writer can delete what it created.
    """

    def __init__(self, ctx: StoreContext, track: Callable[[str], None] | None = None) -> None:
        self.ctx = ctx
        self.schema = ctx.schema
        self.opts = ctx.options
        self.layout = ctx.layout
        self.stats_mode = StatsMode.parse(self.opts.stats_mode())
        changelog_stats = self.opts.get(CHANGELOG_FILE_STATS_MODE)
        self.changelog_stats_mode = self.stats_mode if changelog_stats is None else StatsMode.parse(changelog_stats)
        self._formats: dict[tuple[int | None, bool], WriteFormat] = {}
        self.write_format(0, False).check()  # an unknown format or codec fails before anything is written
        self.target_file_size = self.opts.target_file_size(self.layout.has_pk)
        self.value_fields: list[DataField] = list(self.layout.value_fields)
        """the value columns the files hold (fewer on a data-evolution table whose BLOB columns stay apart)"""
        self.data_file_prefix = self.opts.data_file_prefix()
        self.track = track
        self.external = external_path_provider(self.opts, ctx.table_path)

    def write_format(self, level: int | None, changelog: bool) -> WriteFormat:
        """The format of a new data file at ``level`` (None: an append file), or of a changelog file."""
        fmt = self._formats.get((level, changelog))
        if fmt is None:
            o = self.opts
            if changelog:
                name, comp = o.changelog_file_format(), o.changelog_file_compression()
            else:
                name, comp = o.file_format(level), o.file_compression_at(level)
            fmt = WriteFormat(name, comp, o.file_compression_zstd_level(), o.format_options())
            fmt.check()
            fmt.check_types(self.ctx.schema.fields)
            self._formats[(level, changelog)] = fmt
        return fmt

    def bucket_path(self, partition_values: Sequence[object], bucket: int) -> str:
        pdir = partition_dir(list(self.schema.partition_keys), partition_values,
                             [f.type for f in self.schema.partition_fields()], self.opts.partition_default_name())
        return bucket_dir(self.ctx.table_path, pdir, bucket)

    def _new_path(self, bucket_path: str, name: str) -> str:
        """Where a new file of ``bucket_path`` goes: there, or below an external root (``data-file.external-paths``,
        the manifest entry then records the path in ``_EXTERNAL_PATH``)."""
        table_path = self.ctx.table_path.rstrip("/")
        if self.external is None or not bucket_path.startswith(table_path + "/"):
            return f"{bucket_path}/{name}"
        return self.external.path(bucket_path[len(table_path) + 1:], name)

    def write_kv(self, bucket_path: str, kv: pa.Table, level: int = 0,
                 file_source: FileSource = FileSource.APPEND, changelog: bool = False) -> list[DataFileMeta]:
        """Key-value rows (every table column + ``_SEQUENCE_NUMBER`` + ``_VALUE_KIND``, sorted by key, one row per
        key) as primary-key data files at ``level`` (``changelog``: as changelog files, see :meth:`write_changelog`)."""
        if kv.num_rows == 0:
            return []
        arrays: list[pa.Array | pa.ChunkedArray] = []
        fields: list[pa.Field] = []
        for kf in self.layout.key_fields:
            arrays.append(kv.column(kf.name))
            fields.append(to_arrow_field(kf).with_name(key_column_name(kf.name)).with_nullable(False))
        arrays += [kv.column(SEQUENCE_NUMBER), kv.column(VALUE_KIND)]
        fields += [pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False),
                   pa.field(VALUE_KIND, pa.int8(), nullable=False)]
        for f in self.layout.arrow_schema:
            arrays.append(kv.column(f.name))
            fields.append(f)
        file_table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
        key_cols = [key_column_name(k) for k in self.layout.key_names]
        return self._roll(bucket_path, file_table, key_cols, level, file_source, None, changelog)

    def write_changelog(self, bucket_path: str, kv: pa.Table, level: int = 0,
                        file_source: FileSource = FileSource.APPEND) -> list[DataFileMeta]:
        """Changelog rows (laid out as key-value rows, sorted by key; several rows per key, in change order) as
        changelog files ``changelog-<uuid>-<n>`` (``changelog-file.prefix``) in the bucket directory. Paimon
        writes them at the level of the change: 0 for ``input``, the compaction's output level otherwise.
        ``changelog-file.compression`` / ``changelog-file.stats-mode`` apply; changelog files get no file index."""
        return self.write_kv(bucket_path, kv, level, file_source, changelog=True)

    def write_append(self, bucket_path: str, table: pa.Table, seq_start: int,
                     file_source: FileSource = FileSource.APPEND) -> list[DataFileMeta]:
        """Rows of an append table (the table columns), numbered from ``seq_start``, as level-0 files
        (``file_source`` COMPACT for the output of append compaction)."""
        if table.num_rows == 0:
            return []
        blobs = [f for f in self.layout.blob_fields if f.name in table.column_names]
        if blobs:
            return self._write_with_blobs(bucket_path, table, seq_start, file_source, blobs)
        return self._roll(bucket_path, table, None, 0, file_source, seq_start)

    def _write_with_blobs(self, bucket_path: str, table: pa.Table, seq_start: int, file_source: FileSource,
                          blobs: Sequence[DataField]) -> list[DataFileMeta]:
        """Rows with BLOB columns, as Paimon's data-evolution writer lays them out: the other columns in data files
        (rolled at ``target-file-size``, ``_WRITE_COLS`` = those columns), each BLOB column in ``.blob`` files over
        the rows of each data file (rolled at ``blob.target-file-size``, ``_WRITE_COLS`` = the one column), listed
        right after their data file so that the commit gives them row ids within its range. A value that is a
        serialized blob descriptor is replaced by the bytes it names."""
        if not self.opts.data_evolution_enabled():
            raise OptionError(f"table {self.ctx.table_path}: BLOB column(s) {[f.name for f in blobs]} need "
                              f"data-evolution.enabled = true")
        blob_names = {f.name for f in blobs}
        normal = [n for n in table.column_names if n not in blob_names]
        encoded = {f.name: encode_blob_records(resolve_blob_descriptors(self.ctx.file_io, table.column(f.name)))
                   for f in blobs}
        metas = self._roll(bucket_path, table.select(normal), None, 0, file_source, seq_start)
        target = self.opts.blob_target_file_size()
        out: list[DataFileMeta] = []
        offset = 0
        for m in metas:
            stats_cols = normal if m.value_stats_cols is None else m.value_stats_cols
            out.append(dataclasses.replace(m, write_cols=normal, value_stats_cols=stats_cols))
            for f in blobs:
                records, lengths = encoded[f.name]
                rows = slice(offset, offset + m.row_count)
                file_uuid = None
                for roll, (a, b) in enumerate(blob_file_cuts(lengths[rows], target)):
                    name = new_data_file_name(self.data_file_prefix, roll, suffix=BLOB_FILE_SUFFIX,
                                              file_uuid=file_uuid)
                    file_uuid = name[len(self.data_file_prefix):].rsplit("-", 1)[0]
                    path = self._new_path(bucket_path, name)
                    if self.track is not None:
                        self.track(path)
                    start = offset + a
                    size = write_blob_records(self.ctx.file_io, path, records.slice(start, b - a),
                                              lengths[start:offset + b])
                    meta = make_file_meta(
                        file_name=name, file_size=size, table=table.select([f.name]).slice(start, b - a),
                        schema_id=self.schema.id, level=0, key_fields=[], key_source_names=[], value_fields=[f],
                        stats_mode=self.stats_mode, min_seq=m.min_sequence_number, max_seq=m.max_sequence_number,
                        delete_rows=0, file_source=file_source)
                    out.append(dataclasses.replace(
                        meta, write_cols=[f.name], value_stats_cols=[f.name] if meta.value_stats_cols is None else [],
                        external_path=path if self.external is not None else None))
            offset += m.row_count
        return out

    def _roll(self, bucket_path: str, table: pa.Table, key_cols: list[str] | None, level: int,
              file_source: FileSource, append_seq_start: int | None, changelog: bool = False
              ) -> list[DataFileMeta]:
        n = table.num_rows
        per_row = max(1, table.nbytes // max(1, n))
        rows_per_file = max(1, self.target_file_size // per_row)
        prefix = self.opts.get(CHANGELOG_FILE_PREFIX) if changelog else self.data_file_prefix
        fmt = self.write_format(level if key_cols is not None else None, changelog)
        stats_mode = self.changelog_stats_mode if changelog else self.stats_mode
        file_uuid = None
        metas = []
        for roll, start in enumerate(range(0, n, rows_per_file)):
            chunk = table.slice(start, min(rows_per_file, n - start))
            name = new_data_file_name(prefix, roll, suffix=fmt.extension, file_uuid=file_uuid)
            if file_uuid is None:
                file_uuid = name[len(prefix):].rsplit("-", 1)[0]
            path = self._new_path(bucket_path, name)
            if self.track is not None:
                self.track(path)
            size = write_file(self.ctx.file_io, path, chunk, fmt)
            if key_cols is not None:
                mm = pc.min_max(chunk.column(SEQUENCE_NUMBER))
                min_seq, max_seq = int(mm["min"].as_py()), int(mm["max"].as_py())
                kinds = chunk.column(VALUE_KIND)
                deletes = int(pc.sum(pc.or_(pc.equal(kinds, 1), pc.equal(kinds, 3))).as_py() or 0)
            else:
                assert append_seq_start is not None
                min_seq, max_seq = append_seq_start + start, append_seq_start + start + chunk.num_rows - 1
                deletes = 0
            meta = make_file_meta(
                file_name=name, file_size=size, table=chunk, schema_id=self.schema.id, level=level,
                key_fields=self.layout.key_fields, key_source_names=key_cols or [],
                value_fields=self.value_fields, stats_mode=stats_mode,
                min_seq=min_seq, max_seq=max_seq, delete_rows=deletes, file_source=file_source)
            if self.external is not None:
                meta = dataclasses.replace(meta, external_path=path)
            if changelog:  # changelog files get no file index (Paimon #7697)
                metas.append(meta)
                continue
            # file indexes (file-index.*.columns): embedded in the meta or a tracked <name>.index sidecar
            metas.append(with_file_index(meta, self.ctx.file_io, path, chunk, self.schema.fields, self.schema.options,
                                         self.track))
        return metas
