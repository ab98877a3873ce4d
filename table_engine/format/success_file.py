"""The ``_SUCCESS`` file Paimon's ``success-file`` mark-done action writes into a finished partition's directory.

Paimon's ``SuccessFile`` is a JSON object ``{"creationTime": <ms>, "modificationTime": <ms>}`` written by Jackson's
default pretty printer (two-space indent, ``" : "`` between key and value, no trailing newline). Marking a
partition done again keeps ``creationTime`` and sets ``modificationTime``. Readers ignore unknown fields and take
a missing one as 0 (Jackson's default for a ``long``). This module
is the one place that writes and parses it: the ``mark-partition-done`` command writes it, the partition sensor and
:meth:`TableMetadata.partition_done <table_engine.store.reading.table_metadata.TableMetadata.partition_done>` read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from table_engine.errors import CorruptMetadataError
from table_engine.io.file_io import FileIO

__all__ = ["SUCCESS_FILE", "SuccessFile", "read_success_file", "success_file_path", "write_success_file"]

SUCCESS_FILE = "_SUCCESS"
"""The file's name in the partition directory (Paimon's ``SuccessFileMarkDoneAction.SUCCESS_FILE_NAME``)."""

_CREATION_TIME = "creationTime"
_MODIFICATION_TIME = "modificationTime"


@dataclass(frozen=True)
class SuccessFile:
    """When the partition was first marked done and when last (epoch milliseconds)."""

    creation_time: int
    modification_time: int

    def to_json(self) -> str:
        """Jackson's default pretty printing of Paimon's ``SuccessFile`` (byte for byte)."""
        return (f'{{\n  "{_CREATION_TIME}" : {int(self.creation_time)},\n'
                f'  "{_MODIFICATION_TIME}" : {int(self.modification_time)}\n}}')

    @staticmethod
    def from_json(text: str | bytes, path: str) -> SuccessFile:
        """Parse the file's content as Paimon's Jackson does: unknown fields ignored, a missing time is 0; text
        that is not a JSON object is an error naming ``path``."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError(f"a JSON {type(data).__name__}, not an object")
            return SuccessFile(int(data.get(_CREATION_TIME) or 0), int(data.get(_MODIFICATION_TIME) or 0))
        except (ValueError, TypeError) as e:
            raise CorruptMetadataError(f"success file {path} is not Paimon's SuccessFile JSON "
                                       f"({{\"{_CREATION_TIME}\": ms, \"{_MODIFICATION_TIME}\": ms}}): {e}") from None

    def marked_again(self, now_millis: int) -> SuccessFile:
        """The file after marking the partition done again at ``now_millis`` (creation time kept)."""
        return SuccessFile(self.creation_time, now_millis)


def success_file_path(partition_path: str) -> str:
    """The ``_SUCCESS`` file of the partition directory ``partition_path``."""
    return f"{partition_path.rstrip('/')}/{SUCCESS_FILE}"


def read_success_file(file_io: FileIO, partition_path: str) -> SuccessFile | None:
    """The partition's success file (None when the partition is not marked done)."""
    path = success_file_path(partition_path)
    text = file_io.read_if_exists(path)
    return None if text is None else SuccessFile.from_json(text, path)


def write_success_file(file_io: FileIO, partition_path: str, now_millis: int) -> SuccessFile:
    """Mark the partition done at ``now_millis`` as Paimon does: a new file, or the existing one with a new
    modification time, written whole (an overwrite readers never see torn). Running it again converges."""
    previous = read_success_file(file_io, partition_path)
    done = SuccessFile(now_millis, now_millis) if previous is None else previous.marked_again(now_millis)
    file_io.write_bytes(success_file_path(partition_path), done.to_json().encode(), overwrite=True)
    return done
