"""Write-audit-publish (docs/wap.md): a batch is written into an audit branch of the table, checked there, and only
then published to the readers of the main branch with one fast-forward::

    with DAG("ods_wap", ...):
        write_audit_publish("ods.order_events", source="/landing/batch-7", checks=[{"check": "row_count", "min": 1}])

The tasks (in a task group ``write_audit_publish``): ``open_audit_branch`` (branch ``audit_<run id>`` from a tag of
main's latest snapshot, or empty when main has none) -> ``write_batch`` (into the branch: no Asset event) ->
``check_batch`` (:class:`~paimon_provider.operators.PaimonTableCheckOperator` on the branch: by default on the
rows the batch adds after the snapshot the branch was made from, ``check_scope="table"`` for every row of the
branch) -> ``publish`` (:class:`~paimon_provider.operators.PaimonFastForwardOperator`: main's Asset event) ->
``delete_audit_branch`` -> ``drop_audit_tag``. A failed check fails the run there: main unchanged, the branch kept
for inspection, and ``check_batch``'s log naming the kept branch right above the failure (``on_failure_callback``
too, when given). Every step is idempotent per run (the same branch and tag name on every try), so retries
converge. Kept branches are listed and deleted with :func:`audit_branches` (the ``paimon_audit_branches`` DAG's
form).

Only ``airflow.sdk`` and the operators are imported here: DAG files import this module at parse time.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import TaskGroup, task

from paimon_provider.operators import (
    PaimonDeleteBranchOperator,
    PaimonFastForwardOperator,
    PaimonTableCheckOperator,
    PaimonWriteOperator,
)
from paimon_provider.utils.arguments import as_bool
from paimon_provider.utils.connection import DEFAULT_CONN_ID

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["AUDIT_PREFIX", "CHECK_SCOPES", "audit_branch_name", "audit_branches", "kept_branch_line",
           "log_kept_branch", "write_audit_publish"]

log = logging.getLogger(__name__)

AUDIT_PREFIX = "audit_"
"""Audit branches (and the tags they are made from) are named ``audit_<run id, sanitized>``."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]+")
OPEN_TASK = "open_audit_branch"
CHECK_SCOPES = ("batch", "table")
"""What ``check_batch`` checks: ``batch``, the rows the write adds to the branch (after the snapshot it was made
from: Paimon's ``incremental-between``, over the delta files or the changelog); ``table``, every row of the branch
(main's rows and the batch's)."""


def audit_branch_name(run_id: str) -> str:
    """``audit_<run id>`` with every run of characters other than letters, digits, ``_`` and ``-`` replaced by one
    ``_``: one directory name that Paimon takes as a branch (and tag) name, the same on every try of the run."""
    return AUDIT_PREFIX + (_UNSAFE.sub("_", run_id).strip("_") or "run")


def kept_branch_line(table: str, branch: str) -> str:
    """What a failed audit leaves, in one line: ``check_batch`` logs it right above its failure."""
    return (f"write-audit-publish: main of {table} is unchanged and branch {branch} is kept for inspection (read it "
            f"as {table}$branch_{branch}; list or delete kept branches with the paimon_audit_branches DAG)")


def log_kept_branch(context: Context) -> None:
    """An ``on_failure_callback`` for a failed audit: the kept-branch line again, from the callback (for alerting
    code to copy; ``check_batch``'s own log has the line already, above its failure)."""
    table = str(getattr(context["ti"].task, "table", "?")).split("$", 1)[0]
    log.error("%s", kept_branch_line(table, audit_branch_name(str(context["run_id"]))))


def write_audit_publish(
    table: str,
    *,
    checks: Sequence[Mapping[str, Any]] | str,
    source: str | None = None,
    sql: str | None = None,
    source_format: str = "parquet",
    mode: str = "append",
    check_scope: str = "batch",
    allow_main_moved: bool | str = False,
    on_failure_callback: Callable[[Context], None] | None = None,
    paimon_conn_id: str = DEFAULT_CONN_ID,
    group_id: str = "write_audit_publish",
    write_kwargs: Mapping[str, Any] | None = None,
) -> TaskGroup:
    """Wire write-audit-publish of one batch into ``table`` (which must exist) in the current DAG; returns the task
    group (set dependencies on it: ``land >> write_audit_publish(...)``).

    :param table: ``database.table``.
    :param checks: the audit, as :class:`~paimon_provider.operators.PaimonTableCheckOperator` takes them (a list
        of check dicts, or JSON text; templated).
    :param source: the batch's files (templated); or ``sql``, a Spark SQL query giving its rows.
    :param source_format: ``parquet``, ``csv``, ``json``, ``orc``.
    :param mode: ``append`` or ``overwrite``, as :class:`~paimon_provider.operators.PaimonWriteOperator`.
    :param check_scope: ``batch`` (default): the checks see only the rows the write adds (an empty batch has no
        rows; a bad row already in main does not block this batch); ``table``: every row of the branch, main's
        included (:data:`CHECK_SCOPES`).
    :param allow_main_moved: publish even when main got commits after the branch was made (they are discarded by
        the fast-forward, as Paimon does); default False: the publish task fails instead. A bool, or a template
        ``{{ params.allow_main_moved }}``.
    :param on_failure_callback: called when the checks fail (the branch is kept), e.g. to alert; default None
        (``check_batch``'s log names the kept branch right above its failure).
    :param paimon_conn_id: the ``paimon`` connection.
    :param group_id: the task group's id.
    :param write_kwargs: more arguments of the write operator (``table_options``, ``spark``, ...).
    """
    since = _since_snapshot(table, check_scope)
    with TaskGroup(group_id=group_id) as group:
        opened: Any = open_audit_branch(table, paimon_conn_id)
        branch = "{{ ti.xcom_pull(task_ids='" + opened.operator.task_id + "', key='branch') }}"
        base = "ti.xcom_pull(task_ids='" + opened.operator.task_id + "', key='base_snapshot')"
        write = PaimonWriteOperator(task_id="write_batch", table=table, branch=branch, source=source, sql=sql,
                                    source_format=source_format, mode=mode, paimon_conn_id=paimon_conn_id,
                                    **dict(write_kwargs or {}))
        check = PaimonTableCheckOperator(task_id="check_batch", table=f"{table}$branch_{branch}", checks=checks,
                                         since_snapshot=since.replace("BASE", base) if since else None,
                                         failure_note=kept_branch_line(table, branch),
                                         paimon_conn_id=paimon_conn_id, on_failure_callback=on_failure_callback)
        publish = PaimonFastForwardOperator(task_id="publish", table=table, branch=branch,
                                            check_unchanged=_negate(allow_main_moved), paimon_conn_id=paimon_conn_id)
        delete = PaimonDeleteBranchOperator(task_id="delete_audit_branch", table=table, branch=branch,
                                            paimon_conn_id=paimon_conn_id)
        dropped = drop_audit_tag(table, paimon_conn_id, opened["tag"])
        opened >> write >> check >> publish >> delete >> dropped
    return group


def _since_snapshot(table: str, scope: str) -> str | None:
    """The check's ``since_snapshot`` for ``scope`` (a template when the scope is one), with ``BASE`` standing for
    the expression of the snapshot the branch was made from; None for ``table``."""
    text = scope.strip()
    if text.startswith("{{") and text.endswith("}}"):
        return "{{ BASE if (" + text[2:-2].strip() + ") == 'batch' else '' }}"
    if text not in CHECK_SCOPES:
        raise ValueError(f"write_audit_publish({table!r}): check_scope {scope!r} is not one of {CHECK_SCOPES}")
    return "{{ BASE }}" if text == "batch" else None


def _negate(flag: bool | str) -> bool | str:
    """``not flag`` for a bool or a flag's text; a template ``{{ expr }}`` becomes ``{{ not (expr) }}``."""
    if not isinstance(flag, str):
        return not flag
    text = flag.strip()
    if text.startswith("{{") and text.endswith("}}"):
        return "{{ not (" + text[2:-2].strip() + ") }}"
    return not as_bool(text)


@task(task_id=OPEN_TASK, multiple_outputs=True)
def open_audit_branch(table: str, paimon_conn_id: str = DEFAULT_CONN_ID, **context: Any) -> dict[str, Any]:
    """Make branch ``audit_<run id>`` of ``table``: from main's latest snapshot (Paimon branches from a tag: a tag
    of the same name is made, the branch made from it keeps its own copy, and main's is deleted again, so that main
    is left as it was), or empty when main has no snapshot. A later try of the run finds the branch and returns the
    same."""
    from paimon_provider.hooks.table import PaimonTableHook

    name = audit_branch_name(str(context["run_id"]))
    t = PaimonTableHook(paimon_conn_id).get_table(table)
    if name in t.list_branches():
        tags = {tag.name: tag.snapshot.id for tag in t.branch_table(name).tags()}
        log.info("%s: audit branch %s exists already (an earlier try made it)", table, name)
        return {"branch": name, "tag": name if name in tags else None, "base_snapshot": tags.get(name)}
    base = t.latest_snapshot_id()
    tag = None if base is None else name
    if tag is not None and tag not in {x.name for x in t.tags()}:
        t.create_tag(tag, base)
    t.create_branch(name, tag)
    if tag is not None:
        t.delete_tag(tag, ignore_if_not_exists=True)
    log.info("%s: audit branch %s made %s", table, name, f"at snapshot {base}" if tag else "empty")
    return {"branch": name, "tag": tag, "base_snapshot": base}


@task(task_id="drop_audit_tag")
def drop_audit_tag(table: str, paimon_conn_id: str, tag: str | None) -> bool:
    """Delete the tag the audit branch was made from, which main has after the fast-forward (the branch's copy of
    it); a tag already gone is no error (a later try)."""
    from paimon_provider.hooks.table import PaimonTableHook

    if not tag:
        return False
    t = PaimonTableHook(paimon_conn_id).get_table(table)
    t.delete_tag(tag, ignore_if_not_exists=True)
    return True


def audit_branches(table: Any, *, older_than_millis: int | None = None, delete: bool = False) -> list[dict[str, Any]]:
    """The audit branches of ``table`` (an engine table: those named ``audit_*``, kept by failed audits or by runs
    that stopped before deleting theirs), each ``{"branch", "created", "latest_snapshot", "deleted"}``; only those
    made before ``older_than_millis`` (epoch ms) when given. With ``delete`` they are deleted (data files only they
    used are left for remove-orphan-files, as Paimon's ``delete_branch`` does)."""
    found = []
    for info in table.branches():
        if not info.branch_name.startswith(AUDIT_PREFIX):
            continue
        created_ms = int(info.create_time.timestamp() * 1000)
        if older_than_millis is not None and created_ms >= older_than_millis:
            continue
        latest = table.branch_table(info.branch_name).latest_snapshot_id()
        deleted = bool(delete and table.delete_branch(info.branch_name, ignore_if_missing=True))
        found.append({"branch": info.branch_name, "created": info.create_time.isoformat(sep=" ", timespec="seconds"),
                      "latest_snapshot": latest, "deleted": deleted})
    return found


@task(task_id="audit_branches")
def manage_audit_branches(table: str, older_than: str | None = None, delete: bool | str = False,
                          paimon_conn_id: str = DEFAULT_CONN_ID) -> list[dict[str, Any]]:
    """List (or, with ``delete``, delete) the audit branches of ``table`` made before ``older_than`` ('7 d ago', an
    ISO date-time or epoch ms; empty: all); one log line per branch, the list returned as XCom."""
    import argparse

    from paimon_provider.hooks.table import PaimonTableHook
    from table_engine.ops.argv import parse_time_millis

    text = (older_than or "").strip()
    try:
        cutoff = parse_time_millis(text, name="older_than") if text and text.lower() not in ("none", "null") else None
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"older_than: {e}") from None
    removing = as_bool(delete) if isinstance(delete, str) else bool(delete)
    t = PaimonTableHook(paimon_conn_id).get_table(table)
    found = audit_branches(t, older_than_millis=cutoff, delete=removing)
    for b in found:
        log.info("%s: audit branch %s made %s, latest snapshot %s%s", table, b["branch"], b["created"],
                 b["latest_snapshot"] if b["latest_snapshot"] is not None else "none",
                 ": deleted" if b["deleted"] else "")
    verb = "deleted" if removing else "found (tick Delete to delete them)"
    log.info("%s: %d audit branch%s %s", table, len(found), "" if len(found) == 1 else "es", verb if found else
             "found")
    return found
