"""One file of a format table, encoded and decoded with pyarrow: csv and json as Paimon's ``CsvFormatWriter`` /
``JsonFormatWriter`` write them, parquet and orc through pyarrow's writers.

A file holds the table's non-partition columns (partition values live in the directory names, as Paimon's
``FormatTableWrite`` and Spark write them). Reading tolerates what other writers produce: columns a file lacks read
as null, columns it has beyond the table's are ignored, and json scalars may be json strings (Paimon) or native
numbers and booleans (Spark).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from table_engine.errors import DataError
from table_engine.format_table import text
from table_engine.format_table.options import (
    CSV_ESCAPE_CHARACTER,
    CSV_FIELD_DELIMITER,
    CSV_INCLUDE_HEADER,
    CSV_LINE_DELIMITER,
    CSV_MODE,
    CSV_NULL_LITERAL,
    CSV_QUOTE_CHARACTER,
    JSON_IGNORE_PARSE_ERRORS,
    JSON_LINE_DELIMITER,
    CsvMode,
    FileFormat,
    FormatTableOptions,
    arrow_codec_of_extension,
)

_CONTROL = [chr(c) for c in range(0x20)]


@dataclass(frozen=True)
class CsvSettings:
    """The csv options of one table."""

    delimiter: str
    line_delimiter: str
    quote: str
    escape: str
    header: bool
    null_literal: str
    mode: CsvMode

    @classmethod
    def of(cls, options: FormatTableOptions) -> CsvSettings:
        return cls(options.get(CSV_FIELD_DELIMITER), options.get(CSV_LINE_DELIMITER), options.get(CSV_QUOTE_CHARACTER),
                   options.get(CSV_ESCAPE_CHARACTER), options.get(CSV_INCLUDE_HEADER), options.get(CSV_NULL_LITERAL),
                   options.get(CSV_MODE))


def _joined(lines: pa.Array) -> bytes:
    """The concatenation of a null-free string array, straight from its data buffer."""
    lines = pc.cast(lines, pa.large_string()) if lines.type != pa.string() else lines
    if len(lines) == 0:
        return b""
    buffers = lines.buffers()
    offsets = pa.Array.from_buffers(pa.int32() if lines.type == pa.string() else pa.int64(), len(lines) + 1,
                                    [None, buffers[1]], offset=lines.offset)
    start, end = offsets[0].as_py(), offsets[len(lines)].as_py()
    return bytes(buffers[2][start:end]) if buffers[2] is not None else b""


def _csv_escape(values: pa.Array, s: CsvSettings) -> pa.Array:
    """Quote the values that need it, as ``CsvFormatWriter.escapeField``: the escape character is doubled, then
    each quote is preceded by it; nulls become the null literal. Any line break is quoted (Paimon quotes only its
    line delimiter's first character): a csv reader that splits lines on CR too reads the value whole."""
    specials = {s.delimiter, "\n", "\r", s.quote, s.escape}  # Paimon: the line delimiter's first character
    needs = None
    for ch in specials:
        hit = pc.match_substring(values, ch)
        needs = hit if needs is None else pc.or_(needs, hit)
    quoted = pc.replace_substring(values, s.escape, s.escape + s.escape)
    quoted = pc.replace_substring(quoted, s.quote, s.escape + s.quote)
    quoted = pc.binary_join_element_wise(s.quote, quoted, s.quote, "")
    out = pc.if_else(pc.fill_null(needs, False), quoted, values) if needs is not None else values
    return pc.fill_null(out, s.null_literal)


def encode_csv(table: pa.Table, s: CsvSettings) -> bytes:
    """Rows as ``CsvFormatWriter`` writes them: Paimon text, quoted where needed, the header first if asked."""
    columns = [_csv_escape(text.render(table.column(i)), s) for i in range(table.num_columns)]
    if columns:
        row = pc.binary_join_element_wise(*columns, s.delimiter) if len(columns) > 1 else columns[0]
        lines = pc.binary_join_element_wise(row, s.line_delimiter, "")
    else:
        lines = pa.array([s.line_delimiter] * table.num_rows, pa.string())
    body = _joined(lines)
    if s.header:
        names = _csv_escape(pa.array(table.column_names, pa.string()), s)
        body = (s.delimiter.join(names.to_pylist()) + s.line_delimiter).encode() + body
    return body


def _json_string(values: pa.Array) -> pa.Array:
    """Each value as a json string literal (nulls stay null)."""
    out = pc.replace_substring(values, "\\", "\\\\")
    out = pc.replace_substring(out, '"', '\\"')
    if pc.any(pc.match_substring_regex(out, "[\\x00-\\x1f]")).as_py():
        for ch in _CONTROL:
            out = pc.replace_substring(out, ch, f"\\u{ord(ch):04x}")
    return pc.binary_join_element_wise('"', out, '"', "")


def encode_json(table: pa.Table, line_delimiter: str) -> bytes:
    """One json object per line, every non-null scalar a json string of its Paimon text (as Paimon's
    ``JsonFormatWriter``), nulls ``null``."""
    parts = []
    for i, name in enumerate(table.column_names):
        value = pc.fill_null(_json_string(text.render(table.column(i))), "null")
        parts.append(pc.binary_join_element_wise(json.dumps(name) + ":", value, ""))
    if parts:
        body = pc.binary_join_element_wise(*parts, ",") if len(parts) > 1 else parts[0]
        lines = pc.binary_join_element_wise("{", body, "}" + line_delimiter, "")
    else:
        lines = pa.array(["{}" + line_delimiter] * table.num_rows, pa.string())
    return _joined(lines)


def compress(data: bytes, extension: str) -> bytes:
    """``data`` compressed with the codec of a text file's extension (``''``: unchanged)."""
    if not extension:
        return data
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, arrow_codec_of_extension(extension)) as out:
        out.write(data)
    return bytes(sink.getvalue().to_pybytes())


def decompress(data: bytes, extension: str) -> bytes:
    """The inverse of :func:`compress`."""
    if not extension:
        return data
    with pa.CompressedInputStream(pa.BufferReader(data), arrow_codec_of_extension(extension)) as src:
        return bytes(src.read())


def encode(table: pa.Table, options: FormatTableOptions) -> bytes:
    """The bytes of one file holding ``table`` (the file's columns only)."""
    fmt = options.file_format()
    if fmt is FileFormat.CSV:
        return compress(encode_csv(table, CsvSettings.of(options)), options.text_compression_extension())
    if fmt is FileFormat.JSON:
        return compress(encode_json(table, options.get(JSON_LINE_DELIMITER)), options.text_compression_extension())
    sink = pa.BufferOutputStream()
    codec = options.compression()
    if fmt is FileFormat.PARQUET:
        pq.write_table(table, sink, compression="none" if codec == "uncompressed" else codec)
    else:
        paorc.write_table(table, sink, compression="uncompressed" if codec == "none" else codec)
    return bytes(sink.getvalue().to_pybytes())


def _conform(table: pa.Table, schema: pa.Schema, path: str, converted: dict[str, text.Parsed] | None = None,
             drop_malformed: bool = False) -> pa.Table:
    """``table`` as ``schema``: missing columns null, extra ones dropped, types cast (DataError when not)."""
    columns = []
    keep: pa.Array | None = None
    for field in schema:
        if converted is not None and field.name in converted:
            parsed = converted[field.name]
            columns.append(parsed.values)
            if drop_malformed and parsed.malformed is not None:
                good = pc.invert(parsed.malformed)
                keep = good if keep is None else pc.and_(keep, good)
        elif field.name in table.column_names:
            column = table.column(field.name)
            try:
                columns.append(column if column.type == field.type else column.cast(field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise DataError(f"{path}: column {field.name!r} of type {column.type} does not convert to the "
                                f"table's {field.type}") from None
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    out = pa.Table.from_arrays(columns, schema=schema)
    return out.filter(keep) if keep is not None else out


def _convert_text(table: pa.Table, schema: pa.Schema, path: str, null_literal: str | None,
                  failfast: bool) -> dict[str, text.Parsed]:
    converted: dict[str, text.Parsed] = {}
    for field in schema:
        if field.name not in table.column_names:
            continue
        column = table.column(field.name)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
                or pa.types.is_null(column.type)):
            continue  # a native json number or boolean: cast by _conform
        parsed = text.parse(column.cast(pa.string()), field.type, null_literal)
        if failfast and parsed.malformed is not None:
            text.raise_malformed(path, field.name, field.type, text.first_malformed(column, parsed.malformed))
        converted[field.name] = parsed
    return converted


def decode(data: bytes, path: str, file_schema: pa.Schema, read: list[str], options: FormatTableOptions) -> pa.Table:
    """The rows of one file, as the columns ``read`` of ``file_schema`` (the table's non-partition columns, in
    file order: a csv file's columns are positional)."""
    fmt = options.file_format()
    file_columns = pa.schema([file_schema.field(n) for n in read])
    if fmt is FileFormat.PARQUET:
        table = pq.read_table(pa.BufferReader(data), columns=None)
        return _conform(table.select([n for n in table.column_names if n in file_columns.names]), file_columns, path)
    if fmt is FileFormat.ORC:
        table = paorc.ORCFile(pa.BufferReader(data)).read()
        return _conform(table, file_columns, path)
    data = decompress(data, _extension(path, fmt))
    if fmt is FileFormat.CSV:
        return _decode_csv(data, path, list(file_schema.names), file_columns, options)
    ignore = options.get(JSON_IGNORE_PARSE_ERRORS)
    if not data.strip():
        return _conform(pa.table({}), file_columns, path)
    try:
        table = pajson.read_json(pa.BufferReader(data),
                                 parse_options=pajson.ParseOptions(unexpected_field_behavior="ignore"))
    except pa.ArrowInvalid as e:
        raise DataError(f"{path}: not a json file of one object per line ({e})") from None
    converted = _convert_text(table, file_columns, path, None, failfast=not ignore)
    return _conform(table, file_columns, path, converted)


def _extension(path: str, fmt: FileFormat) -> str:
    from table_engine.format_table.layout import compression_extension_of

    ext = compression_extension_of(path.rsplit("/", 1)[-1], fmt.value)
    return ext if ext in ("gz", "bz2", "zst") else ""


def _decode_csv(data: bytes, path: str, names: list[str], file_columns: pa.Schema,
                options: FormatTableOptions) -> pa.Table:
    s = CsvSettings.of(options)
    if not data.strip():
        return _conform(pa.table({}), file_columns, path)
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1 if s.header else 0),
            parse_options=pacsv.ParseOptions(delimiter=s.delimiter, quote_char=s.quote, escape_char=s.escape,
                                              double_quote=True, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False,
                quoted_strings_can_be_null=False, null_values=[],
                include_columns=[n for n in names if n in file_columns.names]))
    except pa.ArrowInvalid as e:
        raise DataError(f"{path}: not a csv file of the table's {len(names)} columns ({e})") from None
    converted = _convert_text(table, file_columns, path, s.null_literal, failfast=s.mode is CsvMode.FAILFAST)
    return _conform(table, file_columns, path, converted, drop_malformed=s.mode is CsvMode.DROPMALFORMED)
