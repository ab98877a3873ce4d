"""The store layer: a table's files as operations (write, commit, read, compact, change streams, lifecycle).

Shared by every subpackage: :mod:`.context` (what the store knows of a table), :mod:`.paths` (where a data file
lives), :mod:`.partition_spec` (partition selections), :mod:`.layout` (the key, partition and value columns of a
schema) and :mod:`.kv_file_writer` (writing data files).
The subpackages, each importing only the ones before it:

* ``indexes``: deletion vectors, file-index skipping;
* ``reading``: scan planning, reading splits, read-only metadata queries;
* ``committing``: commit messages, the committer, manifests;
* ``compaction``: primary-key and append compaction;
* ``writing``: the writer (``write``: buffer and commit; ``bucketing``: partition and bucket per row;
  ``restore``: committed state; ``bucket_writer``: per-bucket files and compaction), bucket assignment,
  cross-partition upserts;
* ``changes``: incremental, diff and streaming reads, consumers, the changelog API;
* ``lifecycle``: expiry, tags, rollback, orphan files, file-index rewrite, commit-time maintenance.
"""
