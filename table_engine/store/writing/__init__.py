"""The write path: rows -> row kinds, partitions, buckets (fixed, dynamic, cross-partition) -> level-0 files.

:mod:`.write` (``TableWrite``: buffer, spill, ``prepare_commit``) coordinates :mod:`.bucketing` (the partition and
bucket of each row), :mod:`.restore` (the committed state of the buckets) and :mod:`.bucket_writer` (sequence numbers,
level-0 files and compaction per bucket).
"""
