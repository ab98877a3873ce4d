"""Avro container files for Paimon metadata (manifests, manifest lists, index manifests).

Paimon metadata files are Avro object container files compressed with the ``zstandard`` codec, carrying only the
``avro.schema`` and ``avro.codec`` metadata keys (as pypaimon writes them with fastavro).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import fastavro

from table_engine.errors import CorruptMetadataError

__all__ = ["AVRO_CODEC", "datetime_to_millis", "read_avro", "write_avro"]

AVRO_CODEC = "zstandard"

# Parsed schemas keyed by their canonical JSON text, so each schema is parsed once per process.
_PARSED: dict[str, Any] = {}

_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_ONE_MS = timedelta(milliseconds=1)


def _parsed(schema: Mapping[str, Any]) -> Any:
    key = json.dumps(schema, sort_keys=True)
    parsed = _PARSED.get(key)
    if parsed is None:
        parsed = fastavro.parse_schema(dict(schema))
        _PARSED[key] = parsed
    return parsed


def write_avro(records: Iterable[Mapping[str, Any]], schema: Mapping[str, Any]) -> bytes:
    """Encode ``records`` as a zstandard-compressed Avro container file with ``schema`` as writer schema."""
    buf = io.BytesIO()
    fastavro.writer(buf, _parsed(schema), records, codec=AVRO_CODEC)
    return buf.getvalue()


def read_avro(data: bytes, path_for_errors: str) -> list[dict[str, Any]]:
    """Decode all records of an Avro container file; any decoding failure is a :class:`CorruptMetadataError`."""
    try:
        records: list[dict[str, Any]] = list(fastavro.reader(io.BytesIO(data)))  # type: ignore[arg-type]
        return records
    except Exception as e:  # fastavro raises many kinds (ValueError, EOFError, zstd errors, ...)
        raise CorruptMetadataError(f"cannot read Avro metadata file {path_for_errors}: {type(e).__name__}: {e}") from e


def iter_avro(data: bytes, path_for_errors: str) -> Iterator[dict[str, Any]]:
    """The records of an Avro container file one at a time (a caller that keeps a field of each holds only that);
    any decoding failure is a :class:`CorruptMetadataError`."""
    try:
        yield from fastavro.reader(io.BytesIO(data))  # type: ignore[misc]
    except Exception as e:  # fastavro raises many kinds (ValueError, EOFError, zstd errors, ...)
        raise CorruptMetadataError(f"cannot read Avro metadata file {path_for_errors}: {type(e).__name__}: {e}") from e


def datetime_to_millis(value: datetime | int | None) -> int | None:
    """Epoch milliseconds of a decoded ``timestamp-millis`` value (fastavro yields aware UTC datetimes)."""
    if value is None or isinstance(value, int):
        return value
    if value.tzinfo is None:  # local-timestamp-millis: wall clock taken as UTC
        return (value - _EPOCH_NAIVE) // _ONE_MS
    return (value - _EPOCH_UTC) // _ONE_MS
