"""``table-engine``: table jobs from the command line, with the grammar of the Spark application.

``table-engine <command> --warehouse W --table db.t [options]`` runs a job locally with the table engine;
``spark-submit table_engine/spark/app.py <command> ...`` takes exactly the same arguments and runs the data-heavy
commands (write, compact, consume-changelog) distributed. Both log progress to stderr and print one final JSON
object line to stdout (``"status": "ok"`` or ``"error"``, the table, the snapshot id and counts); the exit code is
0 on success, 1 when the job failed, 2 for bad arguments. A failure (any ``TableEngineError``, or bad arguments)
is one line ``error: <message>`` on stderr, last; its traceback is logged only with ``--verbose`` (or when the
failure is not a ``TableEngineError``, i.e. a bug).

Commands (``--help`` on each lists its options):

==================== ===========================================================================================
write                rows from ``--source PATH`` (``--format`` parquet, csv, json, orc; ``--source-option k=v``)
                     or ``--sql QUERY`` (Spark only) into the table; ``--mode append|overwrite`` (dynamic
                     partition overwrite); ``--create-if-missing`` with ``--primary-key``, ``--partition-key``,
                     ``--option k=v`` creates the table from the source's schema; ``--commit-user U`` makes a re-run
                     of the same job a no-op once it has committed.
compact              ``[--full] [--partition k=v,k2=v2 ...] [--idle-time DURATION]``: minor compaction (Paimon's
                     universal picker per bucket; append tables: small files once ``compaction.min.file-num`` are
                     there) or ``--full``; ``--idle-time`` only compacts partitions that got no new data files for
                     that long (Paimon's ``partition_idle_time``).
expire-snapshots     ``[--retain-min N] [--retain-max N] [--older-than TIME] [--max-deletes N]``
create-tag           ``--tag NAME [--snapshot ID] [--time-retained DURATION]``; without ``--snapshot`` on a table
                     with no snapshot yet it tags nothing (``"tag": null``, ``"reason": "no snapshot yet"``).
expire-tags          ``[--older-than TIME]``
expire-partitions    ``[--expiration-time DURATION] [--timestamp-formatter F] [--timestamp-pattern P]
                     [--max-expires N] [--dry-run]``
remove-orphan-files  ``[--older-than TIME] [--dry-run]``
rollback             ``--snapshot ID | --tag NAME``
consume-changelog    ``--consumer-id ID`` then ``--output PATH [--output-format parquet|json|csv]`` or
                     ``--target-table db.t2``; ``[--from-snapshot ID] [--to-snapshot ID]``: reads the changes
                     after the consumer's position (rows with a ``rowkind`` column) and advances the consumer.
                     Exactly once across crashes: see :func:`recover_output` and :func:`recover_consumer`.
==================== ===========================================================================================

TIME is epoch milliseconds, an ISO-8601 date-time (UTC unless it has an offset) or ``'<duration> ago'``
(``'2 h ago'``). DURATION is Paimon's form (``'7 d'``, ``'12 h'``, ``'30 min'``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import pyarrow as pa

from table_engine import clock
from table_engine.catalog import Catalog
from table_engine.consume import consume_changelog
from table_engine.errors import PartitionSpecError, TableEngineError, TableNotExistError
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.options import parse_duration
from table_engine.store.committing import snapshot_info
from table_engine.store.committing.commit import Overwrite
from table_engine.store.partition_spec import parse_partition_text
from table_engine.table import Table

log = logging.getLogger("table_engine.cli")

COMMANDS = ("write", "compact", "expire-snapshots", "create-tag", "expire-tags", "expire-partitions",
            "remove-orphan-files", "rollback", "consume-changelog")
SOURCE_FORMATS = ("parquet", "csv", "json", "orc")


class CliError(TableEngineError, ValueError):
    """A job that cannot run as asked (reported with exit code 1)."""


# ---- grammar ----------------------------------------------------------------------------------------------------
def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value


def _partition_spec(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` -> ``{"k": "v", "k2": "v2"}`` (the one text form, :func:`parse_partition_text`); the values are
    typed against the table's partition columns by the command."""
    try:
        return parse_partition_text(text)
    except PartitionSpecError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def parse_time_millis(text: str, now_millis: int | None = None) -> int:
    """Epoch millis from ``1700000000000``, ``2024-05-01T12:00:00[+02:00]`` (UTC if no offset) or ``7 d ago``."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    if text.lower().endswith(" ago"):
        now = clock.now_millis() if now_millis is None else now_millis
        try:
            return now - parse_duration(text[:-4].strip(), key="--older-than")
        except TableEngineError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    try:
        dt = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not epoch millis, an ISO-8601 date-time or '<duration> ago'") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.UTC)
    return int(dt.timestamp() * 1000)


def _positive_int(text: str) -> int:
    """A count or a snapshot id: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except TableEngineError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


class ArgumentParser(argparse.ArgumentParser):
    """An argument error is one line ``error: <message>`` on stderr and exit status 2 (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {one_line(f'{self.prog}: {message}')}\n")


def one_line(text: str) -> str:
    """``text`` on one line (a multi-line message's lines joined with `` | ``)."""
    return " | ".join(part.strip() for part in str(text).splitlines() if part.strip()) or str(text).strip()


def build_parser(prog: str = "table-engine") -> argparse.ArgumentParser:
    """The argument grammar shared by ``table-engine`` and ``table_engine/spark/app.py``."""
    parser = ArgumentParser(prog=prog, description="Jobs on Paimon tables (see the module docstring).")
    parser.add_argument("--log-level", default="INFO", help="logging level (stderr)")
    parser.add_argument("--verbose", action="store_true", help="print the traceback of a failed job")
    common = ArgumentParser(add_help=False)
    common.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="print the traceback of a failed job")
    common.add_argument("--warehouse", required=True, help="warehouse path or URI")
    common.add_argument("--table", required=True, help="database.table")
    common.add_argument("--catalog-option", action="append", type=_key_value, default=[], metavar="K=V",
                        help="catalog option (repeatable)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=text, description=text)

    p = command("write", "write rows from a source (or a Spark SQL query) into the table")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--source", help="path of the input files")
    src.add_argument("--sql", help="Spark SQL query giving the rows (spark-submit only)")
    p.add_argument("--format", choices=SOURCE_FORMATS, default="parquet", help="format of --source")
    p.add_argument("--source-option", action="append", type=_key_value, default=[], metavar="K=V",
                   help="reader option of --source, e.g. header=true for csv (repeatable)")
    p.add_argument("--mode", choices=("append", "overwrite"), default="append",
                   help="overwrite: dynamic partition overwrite (the partitions present in the data)")
    p.add_argument("--create-if-missing", action="store_true", help="create the table from the source's schema")
    p.add_argument("--primary-key", type=_columns, default=[], help="with --create-if-missing: key columns a,b")
    p.add_argument("--partition-key", type=_columns, default=[], help="with --create-if-missing: partition columns")
    p.add_argument("--option", action="append", type=_key_value, default=[], metavar="K=V",
                   help="with --create-if-missing: table option (repeatable)")
    p.add_argument("--commit-user", help="commit user; re-running a job with the same one does not commit twice")
    p.add_argument("--parallelism", type=_positive_int,
                   help="Spark: writer tasks for primary-key tables (default: Spark's default parallelism)")

    p = command("compact", "compact a table (all buckets, or those of --partition)")
    p.add_argument("--full", action="store_true", help="full compaction (one sorted run per bucket; append tables: "
                   "every small file)")
    p.add_argument("--partition", action="append", type=_partition_spec, default=[], metavar="K=V[,K=V]",
                   help="only this partition (repeatable)")
    p.add_argument("--idle-time", type=_duration, metavar="DURATION",
                   help="only partitions that got no new data files for this long, e.g. '1 d'")
    p.add_argument("--commit-user")
    p.add_argument("--parallelism", type=_positive_int,
                   help="Spark: compaction tasks (default: Spark's default parallelism)")

    p = command("expire-snapshots", "expire old snapshots and the files only they reference")
    p.add_argument("--retain-min", type=_positive_int)
    p.add_argument("--retain-max", type=_positive_int)
    p.add_argument("--older-than", type=parse_time_millis, metavar="TIME")
    p.add_argument("--max-deletes", type=_positive_int)

    p = command("create-tag", "tag a snapshot (latest by default)")
    p.add_argument("--tag", required=True)
    p.add_argument("--snapshot", type=_positive_int)
    p.add_argument("--time-retained", type=_duration, metavar="DURATION")

    p = command("expire-tags", "delete tags past their retention (or created before --older-than)")
    p.add_argument("--older-than", type=parse_time_millis, metavar="TIME")

    p = command("expire-partitions", "drop partitions whose time (from their values) has expired")
    p.add_argument("--expiration-time", type=_duration, metavar="DURATION")
    p.add_argument("--timestamp-formatter")
    p.add_argument("--timestamp-pattern")
    p.add_argument("--strategy", choices=("values-time", "update-time"))
    p.add_argument("--max-expires", type=_positive_int)
    p.add_argument("--dry-run", action="store_true")

    p = command("remove-orphan-files", "delete files no snapshot, tag or changelog references")
    p.add_argument("--older-than", type=parse_time_millis, metavar="TIME", help="default: one day ago")
    p.add_argument("--dry-run", action="store_true")

    p = command("rollback", "make an older snapshot (or a tag) the latest")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--snapshot", type=_positive_int)
    target.add_argument("--tag")

    p = command("consume-changelog", "read the changes after a consumer's position and advance it")
    p.add_argument("--consumer-id", required=True)
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("--output", help="directory for the change rows (one sub-directory per run)")
    out.add_argument("--target-table", help="apply the changes to this table (database.table)")
    p.add_argument("--output-format", choices=("parquet", "json", "csv"), default="parquet")
    p.add_argument("--from-snapshot", type=_positive_int, help="first snapshot to read (default: the consumer's next)")
    p.add_argument("--to-snapshot", type=_positive_int, help="last snapshot to read (default: the latest)")
    return parser


# ---- shared job logic -------------------------------------------------------------------------------------------
def open_catalog(args: argparse.Namespace) -> Catalog:
    return Catalog(args.warehouse, dict(args.catalog_option))


def ensure_table(args: argparse.Namespace, catalog: Catalog, schema: pa.Schema) -> tuple[Table, bool]:
    """The target table of ``write``, created from ``schema`` with ``--create-if-missing``."""
    if catalog.table_exists(args.table):
        return catalog.get_table(args.table), False
    if not args.create_if_missing:
        raise TableNotExistError(f"table {args.table!r} does not exist in {args.warehouse} "
                                 "(add --create-if-missing to create it from the source's schema)")
    table = catalog.create_table(args.table, schema, primary_keys=args.primary_key,
                                 partition_keys=args.partition_key, options=dict(args.option), ignore_if_exists=True)
    log.info("created table %s (primary key %s, partitioned by %s)", args.table, args.primary_key,
             args.partition_key)
    return table, True


def commit_user(args: argparse.Namespace) -> str:
    return str(args.commit_user) if args.commit_user else str(uuid.uuid4())


def previous_commit(table: Table, user: str) -> int | None:
    """The snapshot of an earlier run of this job (same ``--commit-user``), if it committed."""
    snap = snapshot_info.find_commit(table.file_io, table.path, user, BATCH_COMMIT_IDENTIFIER)
    return None if snap is None else snap.id


def dynamic_overwrite(table: Table) -> Overwrite:
    return Overwrite(dynamic=table.options.dynamic_partition_overwrite())


def write_result(table: Table, snapshot_id: int | None, created: bool, skipped: bool = False) -> dict[str, Any]:
    """``write``'s result: the snapshot, the rows and files it added."""
    rows = files = 0
    if snapshot_id is not None:
        changes = snapshot_info.snapshot_changes(table.file_io, table.path, table.snapshot(snapshot_id))
        rows, files = changes.added_rows, len(changes.added_files)
    return {"snapshot_id": snapshot_id, "rows": rows, "files": files, "created": created,
            "already_committed": skipped}


def compact_result(table: Table, snapshot_id: int | None) -> dict[str, Any]:
    if snapshot_id is None:
        return {"snapshot_id": None, "files_before": 0, "files_after": 0}
    changes = snapshot_info.snapshot_changes(table.file_io, table.path, table.snapshot(snapshot_id))
    return {"snapshot_id": snapshot_id, "files_before": len(changes.deleted_files),
            "files_after": len(changes.added_files), "rows": changes.added_rows}


# ---- local implementations --------------------------------------------------------------------------------------
def _write(args: argparse.Namespace) -> dict[str, Any]:
    import pyarrow.dataset as ds

    if args.sql:
        raise CliError("--sql needs Spark: run spark-submit table_engine/spark/app.py write ...")
    fmt: Any = args.format
    if args.source_option:
        fmt = _file_format(args.format, dict(args.source_option))
    try:
        data = ds.dataset(args.source, format=fmt)
    except FileNotFoundError:
        raise CliError(f"--source {args.source} does not exist") from None
    except pa.ArrowInvalid as e:
        raise CliError(f"--source {args.source} cannot be read as {args.format}: {e}") from e
    table, created = ensure_table(args, open_catalog(args), data.schema)
    user = commit_user(args)
    done = previous_commit(table, user) if args.commit_user else None
    if done is not None:
        log.info("%s: commit user %s committed snapshot %d already; nothing to do", table.identifier, user, done)
        return write_result(table, done, created, skipped=True)
    writer = table.new_write()
    rows = 0
    try:
        for batch in data.to_batches():
            writer.write(batch)
            rows += batch.num_rows
        messages = writer.prepare_commit()
        overwrite = dynamic_overwrite(table) if args.mode == "overwrite" else None
        sid = table.new_commit(user).commit(messages, BATCH_COMMIT_IDENTIFIER, overwrite=overwrite)
    except BaseException:
        writer.abort()
        raise
    log.info("%s: wrote %d rows (snapshot %s)", table.identifier, rows, sid)
    return write_result(table, sid, created)


def _file_format(fmt: str, options: Mapping[str, str]) -> Any:
    import pyarrow.dataset as ds

    if fmt == "csv":
        import pyarrow.csv as pcsv

        delimiter = options.get("delimiter", options.get("sep", ","))
        header = options.get("header", "true").lower() == "true"
        return ds.CsvFileFormat(parse_options=pcsv.ParseOptions(delimiter=delimiter),
                                read_options=pcsv.ReadOptions(autogenerate_column_names=not header))
    return fmt


def _compact(args: argparse.Namespace) -> dict[str, Any]:
    table = open_catalog(args).get_table(args.table)
    sid = table.compact(full=args.full, partitions=args.partition or None,
                        idle_partitions_older_than_ms=args.idle_time, commit_user=args.commit_user)
    return compact_result(table, sid)


def _expire_snapshots(args: argparse.Namespace) -> dict[str, Any]:
    table = open_catalog(args).get_table(args.table)
    overrides = {k: v for k, v in (("retain_min", args.retain_min), ("retain_max", args.retain_max),
                                   ("older_than_millis", args.older_than), ("max_deletes", args.max_deletes))
                 if v is not None}
    result = table.expire_snapshots(**overrides)
    return {"expired_snapshots": result.expired_snapshot_ids, "deleted_files": result.deleted_files,
            "earliest_snapshot_id": table.earliest_snapshot_id()}


def _create_tag(args: argparse.Namespace) -> dict[str, Any]:
    table = open_catalog(args).get_table(args.table)
    if args.snapshot is None and table.latest_snapshot_id() is None:
        # a table nothing was written to yet: no latest snapshot to tag (as Paimon's automatic tag creation, a
        # scheduled tag job has nothing to do); an explicit --snapshot that does not exist still fails
        log.info("%s has no snapshot yet: tag %s not created", table.identifier, args.tag)
        return {"tag": None, "snapshot_id": None, "requested_tag": args.tag, "reason": "no snapshot yet"}
    snap = table.create_tag(args.tag, args.snapshot, args.time_retained)
    return {"tag": args.tag, "snapshot_id": snap.id}


def _expire_tags(args: argparse.Namespace) -> dict[str, Any]:
    table = open_catalog(args).get_table(args.table)
    return {"expired_tags": table.expire_tags(args.older_than)}


def _expire_partitions(args: argparse.Namespace) -> dict[str, Any]:
    table = open_catalog(args).get_table(args.table)
    overrides = {k: v for k, v in (("expiration_time", args.expiration_time), ("strategy", args.strategy),
                                   ("timestamp_formatter", args.timestamp_formatter),
                                   ("timestamp_pattern", args.timestamp_pattern),
                                   ("max_expires", args.max_expires)) if v is not None}
    result = table.expire_partitions(dry_run=args.dry_run, **overrides)
    return {"expired_partitions": result.partitions, "snapshot_ids": result.snapshot_ids,
            "snapshot_id": result.snapshot_ids[-1] if result.snapshot_ids else None, "dry_run": args.dry_run}


def _remove_orphan_files(args: argparse.Namespace) -> dict[str, Any]:
    table = open_catalog(args).get_table(args.table)
    result = table.remove_orphan_files(args.older_than, args.dry_run)
    return {"orphan_files": result.count, "bytes": result.total_bytes, "dry_run": result.dry_run,
            "files": result.paths[:100]}


def _rollback(args: argparse.Namespace) -> dict[str, Any]:
    table = open_catalog(args).get_table(args.table)
    result = table.rollback_to(args.snapshot if args.snapshot is not None else args.tag)
    return {"snapshot_id": result.snapshot_id, "removed_snapshots": result.removed_snapshot_ids,
            "removed_tags": result.removed_tags, "deleted_files": result.deleted_files}


def _consume_changelog(args: argparse.Namespace) -> dict[str, Any]:
    return consume_changelog(args, open_catalog(args))


LOCAL_COMMANDS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "write": _write, "compact": _compact, "expire-snapshots": _expire_snapshots, "create-tag": _create_tag,
    "expire-tags": _expire_tags, "expire-partitions": _expire_partitions,
    "remove-orphan-files": _remove_orphan_files, "rollback": _rollback, "consume-changelog": _consume_changelog,
}


# ---- running ----------------------------------------------------------------------------------------------------
def setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)


def run(args: argparse.Namespace, commands: Mapping[str, Callable[[argparse.Namespace], dict[str, Any]]],
        before_output: Callable[[], None] | None = None) -> int:
    """Run ``args.command`` and print its one JSON result line (after ``before_output``, e.g. stopping Spark, so
    that the line comes last); the process exit code."""
    started = time.monotonic()
    head: dict[str, Any] = {"command": args.command, "table": args.table}
    log.info("%s %s: starting", args.command, args.table)
    code = 0
    reason = None
    try:
        out = {**head, "status": "ok", **commands[args.command](args)}
        log.info("%s %s: done", args.command, args.table)
    except Exception as e:  # reported as the job's result: one line, the traceback only with --verbose or for a bug
        expected = isinstance(e, TableEngineError)
        reason = one_line(str(e) if expected else f"{type(e).__name__}: {e}")
        log.error("%s %s failed: %s", args.command, args.table, reason,
                  exc_info=not expected or bool(getattr(args, "verbose", False)))
        out, code = {**head, "status": "error", "error": one_line(f"{type(e).__name__}: {e}")}, 1
    out["seconds"] = round(time.monotonic() - started, 3)
    if before_output is not None:
        before_output()
    if reason is not None:
        print(f"error: {reason}", file=sys.stderr, flush=True)
    print(json.dumps(out, default=str), flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.log_level)
    return run(args, LOCAL_COMMANDS)


if __name__ == "__main__":
    sys.exit(main())
