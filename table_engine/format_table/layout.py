r"""Where a format table's files are: Hive-style partition directories and Paimon's file names.

A partition directory is ``<key>=<value>/`` per partition key (``format-table.partition-path-only-value``:
``<value>/``), the value escaped as Paimon's ``PartitionPathUtils.escapePathName`` does (``%XX``, upper-case hex,
for control characters and ``"#%'*:=?\\{}[]^`` and DEL); a null, empty or blank value is the directory
``partition.default-name``. A value holding ``/`` is refused here (Paimon would escape it to ``%2F``). New files
are ``<data-file.prefix><uuid>-<n>.<format>[.<compression extension>]`` (``DataFilePathFactory``). A name starting
with ``_`` or ``.`` is hidden (``PartitionPathUtils.isHiddenName``): staging trees (``_temporary/``), ``_SUCCESS``
markers and dot files are never read as data.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from table_engine.errors import PartitionSpecError, UnsupportedError
from table_engine.format_table import text

STAGING_DIR = "_temporary"
"""The staging directory of a partition (Paimon's ``RenamingTwoPhaseOutputStream``): files wait there until the
commit renames them into the partition."""

_ESCAPED = frozenset([*map(chr, range(0x20)), '"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "}",
                      "[", "]", "^"])
_UNESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def is_hidden(name: str) -> bool:
    """Whether a path component is hidden by the ``_`` / ``.`` convention."""
    return bool(name) and name[0] in "_."


def escape_path_name(value: str) -> str:
    """Paimon's ``escapePathName``: ``%XX`` for each character that cannot stand in a path component."""
    if not any(c in _ESCAPED for c in value):
        return value
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape_path_name(name: str) -> str:
    """The inverse of :func:`escape_path_name`."""
    return _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), name) if "%" in name else name


def check_partition_type(name: str, t: pa.DataType) -> None:
    """UnsupportedError unless partition key ``name`` has a type whose values name directories unambiguously
    (strings, integers, booleans, decimals, dates)."""
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
            or pa.types.is_boolean(t) or pa.types.is_decimal(t) or pa.types.is_date32(t)):
        raise UnsupportedError(f"Partition key {name!r} has type {t}: a format table's partition keys must be "
                               "strings, integers, booleans, decimals or dates")


@dataclass(frozen=True)
class PartitionCodec:
    """Partition values to directory names and back, for one table."""

    keys: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    default_name: str
    only_value: bool
    legacy_name: bool

    def render_column(self, column: pa.Array | pa.ChunkedArray) -> pa.Array:
        """The unescaped directory value of every row's partition value (null: the default name)."""
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if pa.types.is_date32(column.type) and self.legacy_name:
            values = column.cast(pa.int32()).cast(pa.string())  # Java's toString of the day number
        else:
            values = text.render(column)
        import pyarrow.compute as pc

        blank = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(values), ""), True)
        return pc.if_else(blank, self.default_name, values)

    def render_value(self, key: str, value: object) -> str:
        """The directory value of one partition value of ``key`` (a static partition spec's)."""
        if key not in self.keys:
            raise PartitionSpecError(f"{key!r} is not a partition key of {list(self.keys)}")
        t = self.types[self.keys.index(key)]
        try:
            column = pa.array([value], t)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
            raise PartitionSpecError(f"Partition value {value!r} of {key!r} is not a {t}") from None
        return str(self.render_column(column)[0].as_py())

    def component(self, key: str, value: str) -> str:
        """One directory name: ``key=value`` or ``value``, escaped; PartitionSpecError for a value it cannot
        hold."""
        if "/" in value:
            raise PartitionSpecError(f"Partition value {value!r} of {key!r} holds a '/': refused (it would name a "
                                     "nested directory)")
        if self.only_value and value in (".", ".."):
            raise PartitionSpecError(f"Partition value {value!r} of {key!r} cannot name a directory in the "
                                     "value-only layout")
        escaped = escape_path_name(value)
        return escaped if self.only_value else f"{escape_path_name(key)}={escaped}"

    def relative_path(self, spec: Mapping[str, str]) -> str:
        """The directory of a (leading-prefix) partition spec of rendered values, relative to the table."""
        parts = []
        for key in self.keys[: len(spec)]:
            if key not in spec:
                raise PartitionSpecError(f"Partition spec {dict(spec)} must name the leading partition keys "
                                         f"{list(self.keys)}; {key!r} is missing")
            parts.append(self.component(key, spec[key]))
        return "/".join(parts)

    def parse_component(self, level: int, name: str) -> str | None:
        """The (unescaped) value of a directory name at partition ``level``, or None when the name is not one of
        this table's partition directories."""
        if self.only_value:
            if is_hidden(name) and name != self.default_name:
                return None
            return unescape_path_name(name)
        key, sep, value = name.partition("=")
        if not sep or unescape_path_name(key) != self.keys[level]:
            return None
        return unescape_path_name(value)

    def typed_value(self, level: int, value: str) -> object:
        """A directory value as a Python value of its key's type (None for the default name); PartitionSpecError
        when it does not parse."""
        if value == self.default_name:
            return None
        t = self.types[level]
        if pa.types.is_date32(t) and re.fullmatch(r"-?\d+", value):
            return datetime.date(1970, 1, 1) + datetime.timedelta(days=int(value))
        parsed = text.parse(pa.array([value]), t, None)
        if parsed.malformed is not None:
            raise PartitionSpecError(f"Directory value {value!r} of partition key {self.keys[level]!r} is not a "
                                     f"{t}")
        return parsed.values[0].as_py()


def data_file_name(prefix: str, uuid: str, count: int, file_format: str, compression_extension: str) -> str:
    """``DataFilePathFactory``'s name of the ``count``-th file of a writer: csv/json put the compression
    extension after the format (``data-<uuid>-0.csv.gz``)."""
    suffix = f".{file_format}.{compression_extension}" if compression_extension else f".{file_format}"
    return f"{prefix}{uuid}-{count}{suffix}"


def compression_extension_of(name: str, file_format: str) -> str:
    """The compression extension of a csv/json data file's name (``''`` when uncompressed or unknown)."""
    marker = f".{file_format}."
    index = name.rfind(marker)
    return name[index + len(marker):] if index >= 0 else ""
