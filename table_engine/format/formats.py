"""Data file formats: Parquet, ORC and Avro behind one interface.

A data file is read by its extension (``.parquet``, ``.orc``, ``.avro``: a table whose ``file.format`` changed holds
files of several formats) and written in the format a :class:`WriteFormat` names (``file.format``,
``file.format.per.level``, ``changelog-file.format`` decide it: see ``CoreOptions.write_format``). Every reader
returns Arrow tables of the file's columns by name; the caller casts them to the table's types.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import pyarrow as pa

from table_engine.core_enums import FILE_FORMATS
from table_engine.errors import CorruptMetadataError, MissingFileError, OptionError, TableEngineError
from table_engine.format.avro_data_file import (
    avro_codec,
    avro_column_names,
    iter_avro_data,
    read_avro_data,
    write_avro_data,
)
from table_engine.format.data_file import iter_parquet, parquet_column_names, read_parquet, write_parquet
from table_engine.format.orc_file import iter_orc, orc_codec, orc_column_names, read_orc, write_orc
from table_engine.io.file_io import FileIO
from table_engine.types import DataField

_PARQUET_CODECS = ("zstd", "snappy", "lz4", "gzip", "brotli", "none", "uncompressed")


def check_format(name: str, option: str = "file.format") -> str:
    """The lower-cased format name; an unknown one is an OptionError naming ``option``."""
    fmt = name.strip().lower()
    if fmt not in FILE_FORMATS:
        raise OptionError(f"{option} = {name!r} is not a data file format (one of {', '.join(FILE_FORMATS)})")
    return fmt


@dataclass(frozen=True)
class WriteFormat:
    """How to write one data file: format, ``file.compression`` name, zstd level and the format's own options
    (``orc.*``, ``avro.*``)."""

    name: str = "parquet"
    compression: str = "zstd"
    zstd_level: int = 1
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def extension(self) -> str:
        """The file name suffix, e.g. ``.orc``."""
        return f".{self.name}"

    def check(self) -> None:
        """Raise an OptionError if the format or its compression is unknown (before anything is written)."""
        check_format(self.name)
        c = self.compression.lower()
        if self.name == "orc":
            orc_codec(c)
        elif self.name == "avro":
            avro_codec(c, self.options.get("avro.codec"))
        elif c not in _PARQUET_CODECS:
            raise OptionError(f"file.compression = {self.compression!r} is not a Parquet codec "
                              f"(one of {', '.join(_PARQUET_CODECS)})")


    def check_types(self, fields: Sequence[DataField]) -> None:
        """Raise an OptionError if a column's type (at any depth) has no layout in this format in Paimon
        (:data:`UNWRITABLE_ROOTS`), before anything is written."""
        roots = UNWRITABLE_ROOTS.get(self.name, frozenset())
        for f in fields:
            bad = next((r for r in f.type.roots() if r in roots), None)
            if bad is not None:
                raise OptionError(f"file.format = {self.name!r} cannot hold column {f.name!r} of type {f.type}: "
                                  f"Paimon writes {bad} only to {', '.join(_WRITERS_OF[bad])} files")


#: Types Paimon's writers of a format refuse (Paimon Java's ORC and Avro writers have no VARIANT, ORC no VECTOR).
UNWRITABLE_ROOTS: dict[str, frozenset[str]] = {"orc": frozenset({"VARIANT", "VECTOR"}), "avro": frozenset({"VARIANT"})}
_WRITERS_OF = {root: [f for f in FILE_FORMATS if root not in UNWRITABLE_ROOTS.get(f, frozenset())]
               for root in ("VARIANT", "VECTOR")}

PARQUET = WriteFormat()


def format_of(path: str) -> str:
    """The format of a data file, by its extension (Parquet for a name without a known one)."""
    ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return ext if ext in FILE_FORMATS else "parquet"


def write_file(file_io: FileIO, path: str, table: pa.Table, fmt: WriteFormat = PARQUET) -> int:
    """Write ``table`` as one data file in ``fmt``; returns the file size."""
    if fmt.name == "orc":
        return write_orc(file_io, path, table, fmt.compression, fmt.options)
    if fmt.name == "avro":
        return write_avro_data(file_io, path, table, fmt.compression, fmt.zstd_level, fmt.options.get("avro.codec"))
    return write_parquet(file_io, path, table, fmt.compression, fmt.zstd_level)


def _kind_of(path: str) -> str:
    return "changelog file" if path.rsplit("/", 1)[-1].startswith("changelog-") else "data file"


@contextmanager
def _reading(file_io: FileIO, path: str) -> Iterator[None]:
    """A missing file is a MissingFileError, a broken one a CorruptMetadataError, each naming it."""
    try:
        yield
    except FileNotFoundError:
        raise MissingFileError(_kind_of(path), path) from None
    except TableEngineError:
        raise
    except Exception as e:  # pyarrow (ArrowInvalid, OSError) and fastavro (ValueError, EOFError, ...) errors
        if not file_io.exists(path):
            raise MissingFileError(_kind_of(path), path) from None
        raise CorruptMetadataError(f"cannot read {_kind_of(path)} {path}: {type(e).__name__}: {e}") from e


def read_file(file_io: FileIO, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read (some columns of) a data file of any format; a missing or broken file is a CorruptMetadataError."""
    fmt = format_of(path)
    with _reading(file_io, path):
        if fmt == "orc":
            return read_orc(file_io, path, columns)
        if fmt == "avro":
            return read_avro_data(file_io, path, columns)
        return read_parquet(file_io, path, columns)


def iter_file(file_io: FileIO, path: str, columns: Sequence[str] | None, batch_rows: int) -> Iterator[pa.Table]:
    """(Some columns of) a data file as tables of at most ``batch_rows`` rows; errors as :func:`read_file`."""
    fmt = format_of(path)
    with _reading(file_io, path):
        if fmt == "orc":
            yield from iter_orc(file_io, path, columns, batch_rows)
        elif fmt == "avro":
            yield from iter_avro_data(file_io, path, columns, batch_rows)
        else:
            yield from iter_parquet(file_io, path, columns, batch_rows)


def file_column_names(file_io: FileIO, path: str) -> list[str]:
    """The top-level column names of a data file (its footer or header only)."""
    fmt = format_of(path)
    with _reading(file_io, path):
        if fmt == "orc":
            return orc_column_names(file_io, path)
        if fmt == "avro":
            return avro_column_names(file_io, path)
        return parquet_column_names(file_io, path)
