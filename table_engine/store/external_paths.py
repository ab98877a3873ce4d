"""Where new data files go when a table has external data paths (Paimon 1.1 ``data-file.external-paths``).

Paimon's ``ExternalPathProvider``: a new data, changelog or compaction output file of ``<partition>/bucket-N`` is
written to ``<external root>/<partition>/bucket-N/<file>`` (no database or table directory: each table needs its own
roots) and its manifest entry records that full path in ``_EXTERNAL_PATH``; readers, expiry and orphan cleanup
follow it. The root is chosen per file by ``data-file.external-paths.strategy``:

* ``round-robin`` and ``specific-fs``: the next root in turn, starting at a random one;
* ``entropy-inject``: the next root in turn, below three 4-bit and one 8-bit directories of the Murmur3 hash of the
  file name (``<root>/<partition>/bucket-N/1001/0110/1100/10011001/<file>``);
* ``weight-robin``: a random root by ``data-file.external-paths.weights`` (round-robin without weights or with
  one root).

Index files (hash indexes, deletion vectors) stay in the table's ``index/`` directory, as in Paimon by default.
The roots must be on the table's filesystem (the engine reads and writes a table through one FileIO).
"""

from __future__ import annotations

import bisect
import itertools
import random
from urllib.parse import urlparse

from table_engine.core_enums import ExternalPathStrategy
from table_engine.core_options import DATA_FILE_EXTERNAL_PATHS, DATA_FILE_EXTERNAL_PATHS_STRATEGY, CoreOptions
from table_engine.errors import OptionError
from table_engine.format.bucket import murmur3_32

__all__ = ["ExternalPathProvider", "entropy_dirs", "external_path_provider", "same_filesystem"]

_HASH_BITS = 20
_DIR_LENGTH = 4
_DIR_DEPTH = 3
_LOCAL, _S3 = ("", "file"), ("s3", "s3a", "s3n")


def _filesystem(path: str) -> str:
    scheme = urlparse(path).scheme.lower()
    return "local" if scheme in _LOCAL or len(scheme) == 1 else "s3" if scheme in _S3 else scheme


def same_filesystem(path: str, table_path: str) -> bool:
    """Whether ``path`` is served by the FileIO of the table at ``table_path`` (local, S3, or the same scheme)."""
    return _filesystem(path) == _filesystem(table_path)


def entropy_dirs(file_name: str) -> str:
    """The hash directories entropy-inject puts above a file: the low 20 bits of the file name's Murmur3 hash
    (with bit 31 set, as Java's ``Integer.toBinaryString(h | MIN_VALUE)``) as ``4/4/4/8`` bit directories."""
    bits = format(murmur3_32(file_name.encode("utf-8")) | 0x80000000, "032b")[-_HASH_BITS:]
    cut = _DIR_DEPTH * _DIR_LENGTH
    return "/".join([bits[i:i + _DIR_LENGTH] for i in range(0, cut, _DIR_LENGTH)] + [bits[cut:]])


class ExternalPathProvider:
    """Picks the external path of each new data file of one writer (thread-safe enough: a pick is one step)."""

    def __init__(self, roots: list[str], strategy: ExternalPathStrategy, weights: list[int] | None) -> None:
        self.roots = roots
        self.strategy = strategy
        start = random.randrange(len(roots))
        self._turns = itertools.cycle(roots[start:] + roots[:start])
        self._cumulative: list[int] | None = None
        if strategy == ExternalPathStrategy.WEIGHTED and weights and len(roots) > 1:
            self._cumulative = list(itertools.accumulate(weights))

    def _root(self) -> str:
        if self._cumulative is not None:
            index = bisect.bisect_right(self._cumulative, random.random() * self._cumulative[-1])
            return self.roots[min(index, len(self.roots) - 1)]
        return next(self._turns)

    def path(self, relative_bucket_dir: str, file_name: str) -> str:
        """The external path of a new file ``file_name`` of the bucket directory ``relative_bucket_dir``
        (``[<partition>/]bucket-N``, relative to the table)."""
        if self.strategy == ExternalPathStrategy.ENTROPY_INJECT:
            return f"{self._root()}/{relative_bucket_dir}/{entropy_dirs(file_name)}/{file_name}"
        return f"{self._root()}/{relative_bucket_dir}/{file_name}"


def external_path_provider(options: CoreOptions, table_path: str) -> ExternalPathProvider | None:
    """The provider of a writer of the table at ``table_path``, or None when the table writes into its own
    directory. OptionError when a root is on another filesystem than the table."""
    roots = options.data_file_external_paths()
    if not roots:
        return None
    for root in roots:
        if not same_filesystem(root, table_path):
            raise OptionError(f"{DATA_FILE_EXTERNAL_PATHS.key} = {options.get(DATA_FILE_EXTERNAL_PATHS)!r}: "
                              f"{root!r} is not on the filesystem of the table ({table_path}); this engine writes "
                              "a table's external files through the table's own filesystem")
    return ExternalPathProvider(roots, options.get(DATA_FILE_EXTERNAL_PATHS_STRATEGY),
                                options.data_file_external_path_weights())
