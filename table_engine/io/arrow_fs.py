"""A read-only ``pyarrow.fs`` file system over a :class:`~table_engine.io.base.FileIO`, for the pyarrow readers that
take one (``pyarrow.dataset`` reading a ``write --source`` on S3), so that they reach the store through the FileIO
built by :func:`~table_engine.io.file_io.file_io_for` from the catalog's options, not a file system of their own.

Paths are the FileIO's: full URIs (``s3://bucket/key``). Writes are refused: the engine writes through the FileIO.
"""

from __future__ import annotations

from typing import Any

import pyarrow.fs as pafs

from table_engine.errors import UnsupportedError
from table_engine.io.base import FileIO

__all__ = ["FileIOHandler", "arrow_filesystem"]


def arrow_filesystem(file_io: FileIO) -> pafs.PyFileSystem:
    """``file_io`` as a read-only ``pyarrow.fs`` file system."""
    return pafs.PyFileSystem(FileIOHandler(file_io))


class FileIOHandler(pafs.FileSystemHandler):  # type: ignore[misc]
    """The ``pyarrow.fs.FileSystemHandler`` of :func:`arrow_filesystem`."""

    def __init__(self, file_io: FileIO) -> None:
        self.file_io = file_io

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileIOHandler) and other.file_io is self.file_io

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return id(self.file_io)

    def get_type_name(self) -> str:
        return "table-engine-fileio"

    def normalize_path(self, path: str) -> str:
        return path.rstrip("/")

    # ---- reads -----------------------------------------------------------------------------------------------------
    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        out = []
        for path in paths:
            try:
                out.append(pafs.FileInfo(path, pafs.FileType.File, size=self.file_io.file_size(path)))
            except FileNotFoundError:
                kind = pafs.FileType.Directory if self.file_io.exists(path) else pafs.FileType.NotFound
                out.append(pafs.FileInfo(path, kind))
        return out

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        base = selector.base_dir.rstrip("/")
        statuses = list(self.file_io.walk(base)) if selector.recursive else self.file_io.list_status(base)
        if not statuses and not selector.allow_not_found and not self.file_io.exists(base):
            raise FileNotFoundError(base)
        return [pafs.FileInfo(st.path, pafs.FileType.Directory if st.is_dir else pafs.FileType.File,
                              size=None if st.is_dir else st.size) for st in statuses]

    def open_input_file(self, path: str) -> Any:
        return self.file_io.open_input(path)

    def open_input_stream(self, path: str) -> Any:
        return self.file_io.open_input(path)

    # ---- writes: refused -------------------------------------------------------------------------------------------
    def _refuse(self, path: str, *_: Any) -> Any:
        raise UnsupportedError(f"{path}: this file system is read-only (the engine writes through its FileIO)")

    create_dir = delete_dir = delete_dir_contents = delete_file = move = copy_file = _refuse
    open_output_stream = open_append_stream = _refuse

    def delete_root_dir_contents(self) -> None:
        self._refuse("/")
