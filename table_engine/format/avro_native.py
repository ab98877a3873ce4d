"""Avro data files read by DataFusion's native (Rust) Avro reader, the fast path of ``avro_data_file``.

DataFusion reads an Avro container file whose root schema is a record; Paimon's root is the union
``["null", record]``. Every datum of such a file starts with the union's branch index, a zig-zag varint, which is
byte for byte a ``long`` field holding the index. So the header is rewritten (our own small encoder): the root
becomes the record with one extra first field ``__root_branch`` of type ``long``; codec, sync marker and blocks stay
as they are. DataFusion reads that file (from a temporary copy in the system temp directory, deleted when done: it
reads paths, not our FileIO's bytes), projected to the asked-for columns; the ``__root_branch`` column must hold
the record's branch everywhere (a null root datum, which Paimon never writes, is refused) and is dropped.
DataFusion's Arrow types are then converted to the engine's (the ``schema`` the caller derives from the writer
schema): timestamps' time zones, Paimon's MAP (an array of ``{key, value}`` records) as a map, enums and fixed as
string and binary. See docs/adr/0011-avro-data-files.md for the measured choice.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.avro import encode_long, read_long
from table_engine.io.executor import parallel_map

MAGIC = b"Obj\x01"
ROOT_BRANCH = "__root_branch"

# the codecs DataFusion 55's Avro reader decompresses (fastavro reads the others it knows, e.g. lz4)
NATIVE_CODECS = frozenset({"null", "deflate", "snappy", "zstandard", "bzip2", "xz"})

_lock = threading.Lock()
_context: Any = None
_runtime_lost = False
"""Set in a child forked after DataFusion started: its runtime's threads do not survive ``fork`` (a read would hang
for ever), so such a child reads Avro with fastavro."""


def _after_fork_in_child() -> None:
    global _context, _runtime_lost
    if _context is not None:
        _context, _runtime_lost = None, True


os.register_at_fork(after_in_child=_after_fork_in_child)


def session() -> Any:
    """The one DataFusion ``SessionContext`` of the process, created on first use (one partition per file: the
    engine reads files in parallel itself); DataFusion's Python context may be used from several threads."""
    global _context
    with _lock:
        if _context is None:
            import datafusion  # noqa: PLC0415 - 0.4 s to import; only Avro reads need it

            _context = datafusion.SessionContext(
                datafusion.SessionConfig().with_target_partitions(1))
        return _context


# ---- header ------------------------------------------------------------------------------------------------------

def encode_header(meta: Mapping[str, bytes]) -> bytes:
    """The magic and metadata map of a container file (the sync marker follows)."""
    out = bytearray(MAGIC)
    out += encode_long(len(meta))
    for key, value in meta.items():
        out += encode_long(len(key.encode())) + key.encode() + encode_long(len(value)) + value
    out += encode_long(0)
    return bytes(out)


# ---- read --------------------------------------------------------------------------------------------------------

def native_blocker(meta: Mapping[str, bytes]) -> str | None:
    """Why DataFusion cannot read a file with this header (its codec) in this process, or None when it can."""
    if _runtime_lost:
        return "a process forked after DataFusion started"
    codec = meta.get("avro.codec", b"null").decode()
    return None if codec in NATIVE_CODECS else f"codec {codec!r}"


def _root(schema: Any) -> tuple[dict[str, Any], int | None]:
    """The record of a writer schema and its branch index in the root union (None: the root is the record)."""
    if isinstance(schema, dict):
        return schema, None
    branches = [i for i, b in enumerate(schema) if b != "null"]
    return schema[branches[0]], branches[0]


@contextmanager
def _datafusion_file(data: bytes, meta: Mapping[str, bytes], pos: int,
                     body: tuple[int, int] | None = None) -> Iterator[tuple[str, int | None]]:
    """A temporary copy of the file that DataFusion reads (root union rewritten; ``body``: only the blocks in
    that byte range), and the record's branch."""
    record, branch = _root(json.loads(meta["avro.schema"]))
    header = dict(meta)
    if branch is not None:
        fields = [{"name": ROOT_BRANCH, "type": "long"}, *record["fields"]]
        header["avro.schema"] = json.dumps({**record, "fields": fields}).encode()
    fd, tmp = tempfile.mkstemp(prefix="paimon-avro-", suffix=".avro")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(encode_header(header))
            if body is None:
                out.write(memoryview(data)[pos:])
            else:
                out.write(memoryview(data)[pos:pos + 16])  # the sync marker
                out.write(memoryview(data)[body[0]:body[1]])
        yield tmp, branch
    finally:
        os.unlink(tmp)


def _quoted(name: str) -> Any:
    from datafusion import col  # noqa: PLC0415

    return col('"' + name.replace('"', '""') + '"')


def iter_native(data: bytes, meta: Mapping[str, bytes], pos: int, schema: pa.Schema,
                batch_rows: int | None, body: tuple[int, int] | None = None) -> Generator[pa.Table]:
    """The columns of ``schema`` (the engine's types) of an Avro file (``body``: of the blocks in that byte range),
    in tables of at most ``batch_rows`` rows (None: one table), read by DataFusion."""
    with _datafusion_file(data, meta, pos, body) as (path, branch):
        names = ([ROOT_BRANCH] if branch is not None else []) + schema.names
        df = session().read_avro(path).select(*[_quoted(n) for n in names])
        if batch_rows is None:
            yield _engine_table(df.to_arrow_table(), schema, branch)
            return
        pending: list[pa.RecordBatch] = []
        count, emitted = 0, False
        for batch in df.execute_stream():
            rb = batch.to_pyarrow()
            pending.append(rb)
            count += rb.num_rows
            while count >= batch_rows:
                table = pa.Table.from_batches(pending, schema=rb.schema)
                yield _engine_table(table.slice(0, batch_rows), schema, branch)
                rest = table.slice(batch_rows)
                pending, count, emitted = rest.to_batches(), rest.num_rows, True
        if count or not emitted:
            raw = pa.Table.from_batches(pending) if pending else df.schema().empty_table()
            yield _engine_table(raw, schema, branch)


def _engine_table(raw: pa.Table, schema: pa.Schema, branch: int | None) -> pa.Table:
    """DataFusion's table as the engine's: root branch checked and dropped, types converted."""
    if branch is not None:
        root = raw.column(ROOT_BRANCH)
        if raw.num_rows and not pc.all(pc.equal(root, branch)).as_py():
            raise ValueError("a null row in an Avro data file")
        raw = raw.drop_columns([ROOT_BRANCH])
    columns = [pa.chunked_array([_convert(c, f.type) for c in raw.column(i).chunks], type=f.type)
               for i, f in enumerate(schema)]
    return pa.Table.from_arrays(columns, schema=schema)


def _convert(arr: pa.Array, t: pa.DataType) -> pa.Array:  # noqa: PLR0911 - one branch per nested kind
    """``arr`` (DataFusion's Arrow type) as type ``t``; nested values are rebuilt around converted children."""
    if arr.type.equals(t):
        return arr
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_map(t) or pa.types.is_list(t):
        offsets, values = _children(arr)
        if pa.types.is_list(t):
            return pa.ListArray.from_arrays(offsets, _convert(values, t.value_type), type=t, mask=mask)
        # an Avro map, or Paimon's non-string-keyed MAP: an array of {key, value} records
        keys, items = values.field(0), values.field(1)
        return pa.MapArray.from_arrays(offsets, _convert(keys, t.key_type), _convert(items, t.item_type),
                                       type=t, mask=mask)
    if pa.types.is_struct(t):
        children = [_convert(arr.field(t.field(i).name), t.field(i).type) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=mask)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr.cast(t)


def _children(arr: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The offsets (from 0) and the values of a list or map array, slices taken into account."""
    offsets = arr.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    if first:
        offsets = pc.subtract(offsets, pa.scalar(first, offsets.type))
    return offsets, arr.values.slice(first, last - first)


def native_table(data: bytes, meta: Mapping[str, bytes], pos: int, schema: pa.Schema) -> pa.Table:
    """The columns of ``schema`` of an Avro file as one table, read by DataFusion; a big file in pieces of
    consecutive blocks decoded in parallel (DataFusion decodes one file on one core), concatenated in order."""
    pieces = _pieces(data, pos)
    if len(pieces) == 1:
        return _native_piece(data, meta, pos, schema, None)
    return pa.concat_tables(parallel_map(lambda body: _native_piece(data, meta, pos, schema, body), pieces))


def _native_piece(data: bytes, meta: Mapping[str, bytes], pos: int, schema: pa.Schema,
                  body: tuple[int, int] | None) -> pa.Table:
    tables = iter_native(data, meta, pos, schema, None, body)
    try:
        return next(tables)
    finally:
        tables.close()


SPLIT_BYTES = 8 << 20
"""Files with more block bytes than this are decoded in pieces, one per core (at most 4)."""


def _pieces(data: bytes, pos: int) -> list[tuple[int, int]]:
    """Byte ranges of consecutive blocks (after the header and its sync marker at ``pos``), about equal in size."""
    start, end = pos + 16, len(data)
    n = min(os.cpu_count() or 1, 4)
    if n < 2 or end - start <= SPLIT_BYTES:
        return [(start, end)]
    step = (end - start) / n
    bounds, cut, p = [start], start + step, start
    while p < end:
        _, p = read_long(data, p)  # the block's record count
        size, p = read_long(data, p)
        p += size + 16  # the block and its sync marker
        if p >= cut and p < end:
            bounds.append(p)
            cut = p + step
    bounds.append(end)
    return list(zip(bounds, bounds[1:], strict=False))
