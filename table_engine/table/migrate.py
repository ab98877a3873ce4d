"""Migrate a directory of Parquet or ORC files into a Paimon append table in place (Paimon's ``migrate_table``).

As Paimon's ``HiveMigrator`` does, the files are not copied: each is renamed into bucket 0 of its partition in the
new table (``bucket`` = -1, ``file.format`` the files' format) and recorded in the table's first snapshot, with
stats computed from its rows. Hive-style ``k=v/`` directories become partition columns (strings); the files hold no
partition column (Paimon's readers take it from the partition, as the engine's does for such files).

Every file is read (schema, stats) before anything changes: a file that cannot be read, or whose columns differ
from the first one's, fails the migration with the source untouched. A failure after the first rename (a rename
or the commit) renames every moved file back and drops the table it created, so the source is as it was, byte for
byte. ``delete_origin`` removes the source directory once the snapshot is committed (Paimon drops the Hive table).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from table_engine.errors import CommitOutcomeUnknownError, SchemaMismatchError, TableEngineError, UnsupportedError
from table_engine.format.data_file import StatsMode, make_file_meta, read_parquet
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.orc_file import read_orc
from table_engine.io.base import FileIO
from table_engine.io.paths import unescape_path_name
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.table.table import Table

log = logging.getLogger(__name__)

__all__ = ["MIGRATE_FORMATS", "CreateTable", "MigrateResult", "SourceFile", "migrate_directory", "plan_directory"]

MIGRATE_FORMATS = ("parquet", "orc")

CreateTable = Callable[[pa.Schema, Sequence[str]], Table]
"""Creates the target table from the files' schema and the partition columns."""


@dataclass(frozen=True)
class SourceFile:
    """One data file of the source: where it is, its partition (``{column: value text}``) and its size."""

    path: str
    partition: tuple[tuple[str, str], ...]
    size: int


@dataclass(frozen=True)
class MigrateResult:
    """What a migration did."""

    table: str
    source: str
    snapshot_id: int | None
    files: int
    rows: int
    bytes: int
    partitions: int


def _is_hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def plan_directory(file_io: FileIO, source: str) -> tuple[list[SourceFile], tuple[str, ...]]:
    """The data files under ``source`` (hidden ``_x`` / ``.x`` names skipped) with their ``k=v`` partitions, and
    the partition columns; a directory that is not ``k=v``, or partitions of different columns, are refused."""
    source = source.rstrip("/")
    try:
        listing = sorted(file_io.walk(source), key=lambda s: s.path) if file_io.exists(source) else None
    except NotADirectoryError:
        listing = None
    if listing is None:
        raise UnsupportedError(f"migrate source {source} is not a directory")
    files: list[SourceFile] = []
    keys: tuple[str, ...] | None = None
    for st in listing:
        rel = st.path[len(source) + 1:]
        parts = rel.split("/")
        if any(_is_hidden(p) for p in parts):
            continue
        spec = []
        for d in parts[:-1]:
            k, eq, v = d.partition("=")
            if not eq or not k:
                raise UnsupportedError(f"migrate source {source}: directory {d!r} of {rel} is not a Hive-style "
                                       "<column>=<value> partition directory")
            spec.append((unescape_path_name(k), unescape_path_name(v)))
        these = tuple(k for k, _ in spec)
        if keys is None:
            keys = these
        elif these != keys:
            raise UnsupportedError(f"migrate source {source}: {rel} is in partition columns {list(these)}, other "
                                   f"files in {list(keys)}")
        files.append(SourceFile(st.path, tuple(spec), st.size))
    if not files:
        raise UnsupportedError(f"migrate source {source} holds no data file")
    return files, keys or ()


def _read(file_io: FileIO, path: str, fmt: str) -> pa.Table:
    try:
        return read_orc(file_io, path) if fmt == "orc" else read_parquet(file_io, path)
    except TableEngineError:
        raise
    except Exception as e:  # pyarrow's errors on a file that is not of the format
        raise SchemaMismatchError(f"migrate: cannot read {path} as {fmt}: {type(e).__name__}: "
                                  f"{str(e).splitlines()[0] if str(e) else ''}") from None


def _same_schema(a: pa.Schema, b: pa.Schema) -> bool:
    return a.names == b.names and all(x.type == y.type for x, y in zip(a, b, strict=True))


def migrate_directory(file_io: FileIO, source: str, fmt: str, create_table: CreateTable,
                      drop_table: Callable[[], None],
                      *, delete_origin: bool = False, commit_user: str | None = None,
                      schema: pa.Schema | None = None, partition_keys: Sequence[str] | None = None) -> MigrateResult:
    """Migrate the ``fmt`` files under ``source`` into the table ``create_table(schema, partition_keys)`` makes
    (see the module docstring); ``drop_table()`` drops it again when the migration fails. ``schema`` and
    ``partition_keys`` (a format table's) type the columns and the partition columns; without them the first
    file's columns and string partition columns."""
    if fmt not in MIGRATE_FORMATS:
        raise UnsupportedError(f"migrate: format {fmt!r} is not one of {', '.join(MIGRATE_FORMATS)}")
    if not file_io.has_directories:
        raise UnsupportedError(f"migrate source {source}: {type(file_io).__name__} has no rename (an object store): "
                               "migrating in place needs a file system")
    files, keys = plan_directory(file_io, source)
    if partition_keys is not None and tuple(partition_keys) != keys:
        raise UnsupportedError(f"migrate source {source}: its directories are partitions {list(keys)}, the table's "
                               f"partition columns are {list(partition_keys)}")
    expected_files = pa.schema([f for f in schema if f.name not in keys]) if schema is not None else None
    # 1. read everything (nothing changed yet): each file readable, one schema (one file in memory at a time)
    first: pa.Schema | None = None
    for f in files:
        t = _read(file_io, f.path, fmt)
        clash = [k for k in keys if k in t.schema.names]
        if clash:
            raise SchemaMismatchError(f"migrate: {f.path} holds partition column(s) {clash} of its directories")
        if first is None:
            first = expected_files if expected_files is not None else t.schema
        if not _same_schema(first, t.schema):
            raise SchemaMismatchError(f"migrate: {f.path} has columns {t.schema.names} of types "
                                      f"{[str(x.type) for x in t.schema]}, the "
                                      f"{'table' if expected_files is not None else 'first file ' + files[0].path} "
                                      f"{first.names} of types {[str(x.type) for x in first]}")
    assert first is not None
    if schema is None:
        schema = pa.schema([*(pa.field(f.name, f.type) for f in first), *(pa.field(k, pa.string()) for k in keys)])
    table = create_table(schema, keys)
    moved: list[tuple[str, str]] = []
    try:
        messages = _move_files(table, files, keys, fmt, moved)
        sid = table.new_commit(commit_user).commit(messages)
    except CommitOutcomeUnknownError:
        # the snapshot may be published: its files stay where it references them (a retry finds its commit)
        log.error("migrate into %s: the commit's outcome is unknown; the moved files are left in the table",
                  table.identifier)
        raise
    except BaseException:
        _roll_back(file_io, moved)
        drop_table()
        raise
    if delete_origin:
        file_io.delete(source.rstrip("/"), recursive=True)
    rows = sum(m.row_count for c in messages for m in c.new_files)
    result = MigrateResult(table.identifier, source, sid, len(files), rows,
                           sum(f.size for f in files), len({f.partition for f in files}))
    log.info("migrated %s into %s: %d files, %d rows, %d bytes in %d partitions (snapshot %s)", source,
             table.identifier, result.files, result.rows, result.bytes, result.partitions, sid)
    return result


def _move_files(table: Table, files: Sequence[SourceFile], keys: Sequence[str], fmt: str,
                moved: list[tuple[str, str]]) -> list[CommitMessage]:
    """Read each file again for its stats, rename it into bucket 0 of its partition (``moved`` records each rename
    as it happens) and build its metadata; one commit message per partition."""
    from table_engine.format.binary_row import encode_row
    from table_engine.store.partition_spec import typed_value

    fields = table.schema.fields
    part_fields = table.schema.partition_fields()
    pf = table.store.path_factory
    by_partition: dict[bytes, CommitMessage] = {}
    seq: dict[bytes, int] = {}
    default = table.options.partition_default_name()
    stats_mode = StatsMode.parse(table.options.stats_mode())  # metadata.stats-mode, as the table's writers
    for i, f in enumerate(files, 1):
        t = _read(table.file_io, f.path, fmt)
        spec = dict(f.partition)
        values = [typed_value(k, spec[k], fld.type, default) for k, fld in zip(keys, part_fields, strict=True)]
        partition = encode_row(values, [fld.type for fld in part_fields])
        name = f"migrated-{uuid.uuid4()}-0.{fmt}"
        dst = f"{pf.bucket_dir_of(values, 0)}/{name}"
        table.file_io.rename(f.path, dst)
        moved.append((f.path, dst))
        full = t
        for k, v in zip(keys, values, strict=True):
            full = full.append_column(k, pa.array([v] * t.num_rows, table.arrow_schema.field(k).type))
        start = seq.get(partition, 0)
        meta: DataFileMeta = make_file_meta(
            file_name=name, file_size=f.size, table=full.select([fld.name for fld in fields]),
            schema_id=table.schema.id, level=0, key_fields=[], key_source_names=[], value_fields=fields,
            stats_mode=stats_mode, min_seq=start, max_seq=start + max(t.num_rows, 1) - 1, delete_rows=0)
        seq[partition] = start + max(t.num_rows, 1)
        msg = by_partition.setdefault(partition, CommitMessage(partition=partition, bucket=0, total_buckets=-1))
        msg.new_files.append(meta)
        if i % 100 == 0 or i == len(files):
            log.info("migrate into %s: %d/%d files moved", table.identifier, i, len(files))
    return list(by_partition.values())


def _roll_back(file_io: FileIO, moved: Sequence[tuple[str, str]]) -> None:
    """Rename every moved file back, newest first (a file not found where it was moved to is left as it is)."""
    for src, dst in reversed(moved):
        try:
            if file_io.exists(dst):
                file_io.rename(dst, src)
        except Exception:  # noqa: BLE001 - keep rolling back the others; the original error is raised
            log.exception("migrate: could not move %s back to %s", dst, src)
