"""``consume-changelog``: a consumer's changes delivered exactly once, into files (``--output``) or into another
table (``--target-table``), the consumer advanced only after the delivery.

* into a table: each commit's identifier is the last source snapshot it applied, with one commit user per
  (consumer, source table); a run that stopped after the commit moves the consumer on (:func:`recover_consumer`);
* into files: ``<output>/snapshots-<first>-<last>/`` appears complete or not at all (a temporary directory renamed
  at the end, the ``_SUCCESS`` marker last; on an object store the ``_SUCCESS`` object, created last, completes
  it); a run that stopped after the write moves the consumer past it (:func:`recover_output`). The output is
  written through the FileIO of ``--output`` (:func:`output_file_io`).

A retry of the same job (``--retry-key``, the same on every try) gets the batch an earlier try delivered, not the
next one (:func:`redelivery`): the directory's :data:`DELIVERY_FILE` names the key (published with the directory,
so it is there exactly when the batch is), and a commit into the target table carries it in its commit user
(:func:`consume_commit_user`). See ADR 0015.

The command line (:mod:`table_engine.cli`) and the Spark application share these steps, and run them in one order
(:func:`prepare`); ``args`` is the :class:`~table_engine.ops.commands.ConsumeChangelog` command.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from table_engine.catalog import Catalog
from table_engine.errors import CommitOutcomeUnknownError, ConsumerError
from table_engine.features import Op
from table_engine.io.file_io import FileIO, file_io_for
from table_engine.ops.commands import ConsumeChangelog
from table_engine.ops.facts import write_facts
from table_engine.store.changes.incremental import ROWKIND_COLUMN, changes_schema, plan_changes, read_changes
from table_engine.table import Table
from table_engine.table.guards import check_change_reads, check_consumer, check_supported

log = logging.getLogger("table_engine.cli")


@dataclass(frozen=True)
class ChangeRange:
    """The snapshots a ``consume-changelog`` run reads: ``start`` (exclusive) to ``end`` (inclusive)."""

    start: int
    end: int

    @property
    def empty(self) -> bool:
        return self.end <= self.start


def change_range(args: ConsumeChangelog, table: Table) -> ChangeRange:
    """From the consumer's next snapshot (or ``--from-snapshot``; else the earliest) to ``--to-snapshot`` or the
    latest snapshot. With ``--output`` it first runs :func:`recover_output` (which may move the consumer on past a
    directory an earlier run completed but did not get to acknowledge)."""
    if args.output:
        recover_output(args, table)
    if args.from_snapshot is not None and args.to_snapshot is not None and args.from_snapshot > args.to_snapshot:
        raise ConsumerError(f"--from-snapshot {args.from_snapshot} is after --to-snapshot {args.to_snapshot}")
    latest = table.latest_snapshot_id() or 0
    end = min(args.to_snapshot, latest) if args.to_snapshot is not None else latest
    if args.from_snapshot is not None:
        first = args.from_snapshot
    else:
        consumed = table.consumers().get(args.consumer_id)
        first = consumed if consumed is not None else (table.earliest_snapshot_id() or 1)
    return ChangeRange(first - 1, end)


OUTPUT_DIR_NAME = re.compile(r"snapshots-(\d+)-(\d+)")
SUCCESS_FILE = "_SUCCESS"       # written last into an output directory (Spark's job committer writes it too)
DELIVERY_FILE = "_delivery.json"  # what the directory delivered, to whom (written before it is complete)


def output_dir(args: ConsumeChangelog, rng: ChangeRange) -> str:
    """The ``--output`` subdirectory of one change range: ``snapshots-<first>-<last>``."""
    return f"{(args.output or '').rstrip('/')}/snapshots-{rng.start + 1}-{rng.end}"


def output_file_io(args: ConsumeChangelog) -> FileIO:
    """The FileIO of ``--output`` (a local path or a URI: ``s3://``/``s3a://`` take the catalog's ``s3.*``
    options), built by :func:`~table_engine.io.file_io.file_io_for` like every other FileIO."""
    return file_io_for(args.output or "", args.catalog_options)


def staging_dir(directory: str, consumer_id: str) -> str:
    """The temporary sibling of output ``directory`` that a run writes into before :func:`publish` (in the same
    form: a path or a URI of the same scheme)."""
    parent, name = directory.rstrip("/").rsplit("/", 1)
    return f"{parent}/{tmp_prefix(consumer_id)}{name.removeprefix('snapshots-')}-{uuid.uuid4().hex}"


def tmp_prefix(consumer_id: str) -> str:
    """Name prefix of the temporary directories a ``--consumer-id`` writes its output into (the leading ``_``
    hides them from Spark's and pyarrow's directory readers)."""
    return f"_tmp-{consumer_id}-snapshots-"


def recover_output(args: ConsumeChangelog, table: Table) -> None:
    """Exactly once into ``--output``: a run writes ``snapshots-<first>-<last>`` completely (into a temporary
    directory renamed at the end, or a :data:`SUCCESS_FILE` written last) before it advances the consumer, so a
    run that stopped between the two left a complete directory starting at the consumer's next snapshot: move the
    consumer past it (repeatedly, for a chain of such runs), so that the next range starts after it. Also deletes
    this consumer's temporary directories of crashed runs and directories starting at the consumer's position
    without the :data:`SUCCESS_FILE` (a write that died half-way: their rows are read again). Not with
    ``--from-snapshot``, which re-reads on purpose (only the temporary directories are deleted then)."""
    fio = output_file_io(args)
    prefix = tmp_prefix(args.consumer_id)
    finals: dict[int, list[tuple[int, str]]] = {}
    for st in fio.list_status((args.output or "").rstrip("/")):
        name = st.path.rstrip("/").rsplit("/", 1)[-1]
        if not st.is_dir:
            continue
        if name.startswith(prefix):
            log.info("deleting %s, left by a consume-changelog run that did not finish", st.path)
            fio.delete(st.path, recursive=True)
        elif (m := OUTPUT_DIR_NAME.fullmatch(name)) is not None:
            finals.setdefault(int(m.group(1)), []).append((int(m.group(2)), st.path))
    if args.from_snapshot is not None:
        return
    consumed = table.consumers().get(args.consumer_id)
    first = consumed if consumed is not None else (table.earliest_snapshot_id() or 1)
    while True:
        done = None
        for last, path in finals.pop(first, []):
            if fio.exists(f"{path}/{SUCCESS_FILE}"):
                done = last if done is None else max(done, last)
            else:
                log.info("deleting %s: its write did not finish (no %s)", path, SUCCESS_FILE)
                fio.delete(path, recursive=True)
        if done is None or done < first:
            return
        log.info("%s: %s/snapshots-%d-%d was written but consumer %s not advanced; moving it to snapshot %d",
                 table.identifier, args.output, first, done, args.consumer_id, done + 1)
        table.maintenance.reset_consumer(args.consumer_id, done + 1)
        first = done + 1


def advance_consumer(table: Table, consumer_id: str, rng: ChangeRange) -> None:
    """Move the consumer past ``rng``: its next snapshot becomes ``rng.end + 1``."""
    table.maintenance.reset_consumer(consumer_id, rng.end + 1)
    log.info("%s: consumer %s now at snapshot %d", table.identifier, consumer_id, rng.end + 1)


def consume_commit_user(args: ConsumeChangelog) -> str:
    """Commit user of ``consume-changelog``'s commits into ``--target-table``: ``consume-<consumer>-<source
    table>`` (:func:`consumer_user_base`), with ``@<retry key>`` appended when the run has one; each commit's
    identifier is the last source snapshot it applied."""
    base = consumer_user_base(args)
    return f"{base}@{args.retry_key}" if args.retry_key else base


def consumer_user_base(args: ConsumeChangelog) -> str:
    """The part of :func:`consume_commit_user` shared by every run of one (consumer, source table)."""
    return f"consume-{args.consumer_id}-{args.table}"


def is_consumer_commit(args: ConsumeChangelog, commit_user: str) -> bool:
    """Did a run of this (consumer, source table) make a commit of ``commit_user`` (whatever its retry key)?"""
    base = consumer_user_base(args)
    return commit_user == base or commit_user.startswith(base + "@")


def delivery_record(args: ConsumeChangelog, rng: ChangeRange, rows: int) -> bytes | None:
    """The :data:`DELIVERY_FILE` of an output directory (None without ``--retry-key``: no file)."""
    if not args.retry_key:
        return None
    return json.dumps({"consumer_id": args.consumer_id, "retry_key": args.retry_key, "table": args.table,
                       "from_snapshot": rng.start + 1, "to_snapshot": rng.end, "rows": rows}).encode()


def redelivery(args: ConsumeChangelog, table: Table, target: Table | None) -> dict[str, Any] | None:
    """The result of the batch an earlier run with this ``--retry-key`` delivered (None: none did), after moving
    the consumer past it if that run stopped before acknowledging it. Only the newest delivery of the consumer is
    looked at (a retry follows its own try); not with ``--from-snapshot``, which re-reads on purpose."""
    if not args.retry_key or args.from_snapshot is not None:
        return None
    found = _delivered_output(args, table) if args.output else _delivered_commit(args, target)
    if found is None:
        return None
    consumed = table.consumers().get(args.consumer_id)
    if consumed is None or consumed <= found["to_snapshot"]:
        table.maintenance.reset_consumer(args.consumer_id, found["to_snapshot"] + 1)
    log.info("%s: consumer %s delivered snapshots up to %d to an earlier try of %s already: returning that batch "
             "again", table.identifier, args.consumer_id, found["to_snapshot"], args.retry_key)
    return {"consumer_id": args.consumer_id, **found, "redelivered": True}


def _delivered_output(args: ConsumeChangelog, table: Table) -> dict[str, Any] | None:
    fio = output_file_io(args)
    consumed = table.consumers().get(args.consumer_id)
    if consumed is None:
        return None
    for st in fio.list_status((args.output or "").rstrip("/")):
        m = OUTPUT_DIR_NAME.fullmatch(st.path.rstrip("/").rsplit("/", 1)[-1])
        # the newest delivery: acknowledged (ends before the consumer) or not (starts at it)
        if not st.is_dir or m is None or consumed not in (int(m.group(1)), int(m.group(2)) + 1):
            continue
        if not fio.exists(f"{st.path}/{SUCCESS_FILE}"):
            continue
        try:
            record = json.loads(fio.read_bytes(f"{st.path}/{DELIVERY_FILE}"))
        except (FileNotFoundError, ValueError):
            continue
        if record.get("retry_key") == args.retry_key and record.get("consumer_id") == args.consumer_id:
            return {"from_snapshot": record["from_snapshot"], "to_snapshot": record["to_snapshot"],
                    "rows": record["rows"], "output": st.path.rstrip("/")}
    return None


def _delivered_commit(args: ConsumeChangelog, target: Table | None) -> dict[str, Any] | None:
    from table_engine.store.committing import snapshot_info

    if target is None:
        return None
    earliest = target.earliest_snapshot_id() or 1
    sid = target.latest_snapshot_id()
    while sid is not None and sid >= earliest:
        snap = target.snapshot(sid)
        if is_consumer_commit(args, snap.commit_user):  # the consumer's newest delivery: this key's or not
            if snap.commit_user != consume_commit_user(args):
                return None
            rows = snapshot_info.snapshot_changes(target.file_io, target.path, snap).added_rows
            return {"to_snapshot": snap.commit_identifier, "rows": rows, "target_snapshot_id": snap.id}
        sid -= 1
    return None


def recover_consumer(args: ConsumeChangelog, table: Table, target: Table) -> None:
    """Exactly once into ``--target-table``: the consumer advances only after the downstream commit, so a run that
    stopped between the two left the consumer behind what ``target`` holds; advance it to after the last source
    snapshot applied (the identifier of the newest commit of :func:`consume_commit_user`). Not with
    ``--from-snapshot``, which re-reads on purpose."""
    if args.from_snapshot is not None:
        return
    earliest = target.earliest_snapshot_id() or 1
    sid = target.latest_snapshot_id()
    while sid is not None and sid >= earliest:
        snap = target.snapshot(sid)
        if is_consumer_commit(args, snap.commit_user):
            consumed = table.consumers().get(args.consumer_id)
            if consumed is None or snap.commit_identifier >= consumed:
                log.info("%s: snapshot %d of %s already applied snapshots up to %d; moving consumer %s there",
                         table.identifier, snap.id, target.identifier, snap.commit_identifier, args.consumer_id)
                table.maintenance.reset_consumer(args.consumer_id, snap.commit_identifier + 1)
            return
        sid -= 1


@dataclass(frozen=True)
class Prepared:
    """A ``consume-changelog`` run past :func:`prepare`: what its runner reads and delivers."""

    table: Table
    """the source table"""
    target: Table | None
    """``--target-table`` (None: ``--output``)"""
    range: ChangeRange
    """the snapshots to deliver (not empty)"""
    result: dict[str, Any]
    """the result's fields so far; the runner adds ``rows`` and ``output`` or the target's commit"""


def prepare(args: ConsumeChangelog, catalog: Catalog) -> Prepared | dict[str, Any]:
    """The steps of ``consume-changelog`` before any change is read, the same for every runner (this process's,
    the Spark job's): the refusals (a system table records no consumer; the source's and the target's capability
    gates; the changes of a data-evolution table), the batch an earlier try delivered (:func:`redelivery`), the
    consumer moved past what the target holds (:func:`recover_consumer`), then the range. The run's result when it
    ends here (a batch delivered again, or no new snapshot), else what it reads and delivers."""
    table = catalog.get_table(args.table)
    check_consumer(table, args.consumer_id)  # a system table records no consumer: refuse before any output
    check_supported(table, Op.MAINTAIN)  # the capability gate: changelog consumption records progress
    check_change_reads(table, "consume-changelog")
    target = catalog.get_table(args.target_table) if args.target_table else None
    again = redelivery(args, table, target)
    if again is not None:
        return again
    if target is not None:
        check_supported(target, Op.WRITE)
        recover_consumer(args, table, target)
    rng = change_range(args, table)
    result: dict[str, Any] = {"consumer_id": args.consumer_id, "from_snapshot": rng.start + 1,
                              "to_snapshot": rng.end, "rows": 0}
    if rng.empty:
        return result
    return Prepared(table, target, rng, result)


def consume_changelog(args: ConsumeChangelog, catalog: Catalog) -> dict[str, Any]:
    """The ``consume-changelog`` command run in this process."""
    prepared = prepare(args, catalog)
    if not isinstance(prepared, Prepared):
        return prepared
    table, target, rng, result = prepared.table, prepared.target, prepared.range, prepared.result
    ctx = table.store
    splits = plan_changes(table.file_io, table.path, table.schema, table.options, rng.start, rng.end)
    changes = pa.concat_tables([read_changes(ctx, s) for s in splits]) if splits else \
        changes_schema(table.schema).empty_table()
    result["rows"] = changes.num_rows
    if args.output:
        result["output"] = write_output(changes, output_dir(args, rng), args.output_format, args.consumer_id,
                                        output_file_io(args), delivery_record(args, rng, changes.num_rows))
    else:
        assert target is not None
        sid = apply_changes(args, target, changes, rng) if changes.num_rows else None
        result["target_snapshot_id"] = sid
        result["commit"] = write_facts(target, sid)
    advance_consumer(table, args.consumer_id, rng)
    return result


def apply_changes(args: ConsumeChangelog, target: Table, changes: pa.Table, rng: ChangeRange) -> int | None:
    """Write the changes (row kinds from the ``rowkind`` column) into ``--target-table`` and commit them with the
    range's last snapshot id as commit identifier; the new snapshot id (None if the commit was a no-op)."""
    writer = target.new_write()
    try:
        writer.write(changes.drop_columns([ROWKIND_COLUMN]), changes.column(ROWKIND_COLUMN))
        messages = writer.prepare_commit()
        return target.commit(messages, consume_commit_user(args), rng.end)
    except CommitOutcomeUnknownError:
        raise  # the snapshot may be published: its data files must stay
    except BaseException:
        writer.abort()
        raise


def write_output(changes: pa.Table, directory: str, fmt: str, consumer_id: str, fio: FileIO,
                 record: bytes | None = None) -> str:
    """Write ``changes`` as ``directory`` all or nothing; ``directory``.

    With directories (a local disk, HDFS): into :func:`staging_dir`, the :data:`SUCCESS_FILE` last, then
    :func:`publish` renames it. On an object store, which has no rename: the files go to their final keys and the
    :data:`SUCCESS_FILE`, created last with a conditional create, completes the directory (readers and
    :func:`recover_output` take a directory without it as unfinished). ``record``: the :data:`DELIVERY_FILE`."""
    if fio.has_directories:
        staging = staging_dir(directory, consumer_id)
        write_files(changes, staging, fmt, fio, record)
        publish(staging, directory, fio)
        return directory
    if fio.exists(directory):  # only when --from-snapshot re-reads: replaced
        fio.delete(directory, recursive=True)
    write_files(changes, directory, fmt, fio, record)
    return directory


def write_files(changes: pa.Table, directory: str, fmt: str, fio: FileIO, record: bytes | None = None) -> None:
    """``directory/part-0.<fmt>`` (no Parquet or CSV file for no rows, as ``pyarrow.dataset.write_dataset``), the
    :data:`DELIVERY_FILE` ``record`` (if any), then the empty :data:`SUCCESS_FILE` as a conditional create (a second run
    publishing the same directory fails)."""
    if changes.num_rows or fmt == "json":
        write_part(changes, f"{directory}/part-0.{fmt}", fmt, fio)
    if record is not None:
        fio.write_bytes(f"{directory}/{DELIVERY_FILE}", record, overwrite=True)
    if not fio.write_if_absent(f"{directory}/{SUCCESS_FILE}", b""):
        raise ConsumerError(f"{directory}/{SUCCESS_FILE} exists: another consume-changelog run wrote {directory}")


def write_part(changes: pa.Table, path: str, fmt: str, fio: FileIO) -> None:
    """One output file of ``changes`` in ``fmt`` (``parquet``, ``csv`` with a header line, or JSON lines)."""
    with fio.open_output(path) as out:
        if fmt == "json":
            for batch in changes.to_batches():
                out.write("".join(json.dumps(row, default=str) + "\n" for row in batch.to_pylist()).encode())
        elif fmt == "csv":
            import pyarrow.csv as pcsv

            pcsv.write_csv(changes, out)
        else:
            import pyarrow.parquet as pq

            pq.write_table(changes, out)


def publish(staging: str, directory: str, fio: FileIO) -> None:
    """Move the complete ``staging`` directory (its :data:`SUCCESS_FILE` written) to ``directory``, replacing
    ``directory`` (which exists only when ``--from-snapshot`` re-reads): a rename where there are directories; on
    object stores the files are copied with the :data:`SUCCESS_FILE` last, then ``staging`` is deleted."""
    if not fio.exists(f"{staging}/{SUCCESS_FILE}"):
        raise FileNotFoundError(f"{staging} has no {SUCCESS_FILE}: its write did not complete")
    if fio.exists(directory):
        fio.delete(directory, recursive=True)
    if fio.has_directories:
        fio.rename(staging, directory)
        return
    base = staging.rstrip("/")
    files = sorted((st.path for st in fio.walk(base)), key=lambda p: p.endswith(f"/{SUCCESS_FILE}"))
    for path in files:
        fio.write_bytes(directory.rstrip("/") + path[len(base):], fio.read_bytes(path), overwrite=True)
    fio.delete(base, recursive=True)
