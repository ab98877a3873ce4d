"""Opening a global index file (BTree, bitmap): the stream and its fixed-size footer, read from the file's end.

Both formats end in a footer of known size that holds the offsets of their blocks and a magic number; a file shorter
than its footer, or whose footer cannot be read whole, is damaged. The magic, version and offsets are each format's
to check (:mod:`table_engine.format.btree_index`, :mod:`table_engine.format.bitmap_index`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from table_engine.errors import CorruptMetadataError, MissingFileError
from table_engine.io.base import FileIO

__all__ = ["open_with_footer"]


@contextlib.contextmanager
def open_with_footer(file_io: FileIO, path: str, file_size: int, footer_size: int, kind: str
                     ) -> Iterator[tuple[Any, bytes]]:
    """The open index file at ``path`` (``file_size`` bytes, as its index entry records) and its last
    ``footer_size`` bytes. A missing file is a :class:`MissingFileError` (a referenced global index file), a short
    one a :class:`CorruptMetadataError` naming ``kind`` ("btree index", "bitmap index") and the path."""
    try:
        stream = file_io.open_input(path)
    except FileNotFoundError as e:
        if isinstance(e, MissingFileError):
            raise
        raise MissingFileError("global index file", path) from None
    with stream as f:
        if file_size < footer_size:
            raise CorruptMetadataError(f"{kind} {path}: {file_size} bytes, shorter than its footer")
        f.seek(file_size - footer_size)
        footer = f.read(footer_size)
        if len(footer) != footer_size:
            raise CorruptMetadataError(f"{kind} {path}: the footer cannot be read (file size {file_size})")
        yield f, footer
