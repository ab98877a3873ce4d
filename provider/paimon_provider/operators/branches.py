"""Branches with the Spark application: create (empty or from a tag), delete, rename, fast-forward.

A task reads or writes a branch through ``table="db.t$branch_<name>"`` (every operator takes it); these operators
manage the branches themselves. Retries converge (docs/retries.md): a branch this task made already, a branch
already deleted or renamed, a fast-forward already done are success.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import PaimonSparkOperator, is_retry, snapshot_id_of
from paimon_provider.utils.arguments import as_bool, as_optional_text

if TYPE_CHECKING:
    from airflow.sdk import Context

    from table_engine.ops import CreateBranch, DeleteBranch, FastForward, RenameBranch


def _name(value: object, what: str, command: str) -> str:
    text = as_optional_text(value)
    if not text:
        raise ValueError(f"{command} needs {what}")
    return text


class PaimonCreateBranchOperator(PaimonSparkOperator["CreateBranch"]):
    """Create a branch of ``table``: empty (the table's schema, no snapshot) or from a tag (Paimon's
    ``create_branch``). A branch of that name already made from the same tag (by an earlier try) is success; one
    made otherwise fails the task unless ``if_exists="skip"``.

    :param branch: the branch name (templated).
    :param tag: the tag to branch from (templated; default: an empty branch).
    :param if_exists: ``"error"`` (default) or ``"skip"`` for a branch of that name made otherwise (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "branch", "tag", "if_exists")

    def __init__(self, *, branch: str, tag: str | None = None, if_exists: str = "error", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.tag = tag
        self.if_exists = if_exists

    def build_command(self, warehouse: str) -> CreateBranch:
        from table_engine.ops import CreateBranch

        return CreateBranch(warehouse=warehouse, table=self.table,
                            branch=_name(self.branch, "a branch name", self.command),
                            tag=as_optional_text(self.tag) or None,
                            if_exists=as_optional_text(self.if_exists) or "error")


class PaimonDeleteBranchOperator(PaimonSparkOperator["DeleteBranch"]):
    """Delete a branch (its directory; data files only it used are left for orphan cleaning, as in Paimon).

    A branch that does not exist fails the first try (unless ``ignore_if_missing``); on a later try of the task
    instance it is success: an earlier try deleted it.

    :param branch: the branch name (templated).
    :param ignore_if_missing: a branch that does not exist is no error, on the first try too (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "branch", "ignore_if_missing")

    def __init__(self, *, branch: str, ignore_if_missing: bool | str = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.ignore_if_missing = ignore_if_missing
        self._retry = False

    def build_command(self, warehouse: str) -> DeleteBranch:
        from table_engine.ops import DeleteBranch

        return DeleteBranch(warehouse=warehouse, table=self.table,
                            branch=_name(self.branch, "a branch name", self.command),
                            ignore_if_missing=as_bool(self.ignore_if_missing) or self._retry)

    def execute(self, context: Context) -> dict[str, Any] | None:
        self._retry = is_retry(context)
        return super().execute(context)


class PaimonRenameBranchOperator(PaimonSparkOperator["RenameBranch"]):
    """Rename a branch (Paimon 1.1+'s ``rename_branch``); a retry that finds it renamed is success.

    :param branch: the branch name (templated).
    :param to: its new name (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "branch", "to")

    def __init__(self, *, branch: str, to: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.to = to

    def build_command(self, warehouse: str) -> RenameBranch:
        from table_engine.ops import RenameBranch

        return RenameBranch(warehouse=warehouse, table=self.table,
                            branch=_name(self.branch, "a branch name", self.command),
                            to=_name(self.to, "a new name (to)", self.command))


class PaimonFastForwardOperator(PaimonSparkOperator["FastForward"]):
    """Publish a branch: ``table`` (its main branch) becomes the branch (Paimon's ``fast_forward``: the table's
    snapshots, tags and schemas from the branch's first snapshot on are replaced by the branch's). A fast-forward
    already done is success.

    Paimon's fast-forward discards commits made to the table since the branch was made; ``check_unchanged`` (the
    default) fails the task instead when there are any, so that a concurrent writer's commit is never lost.

    The fast-forward publishes the branch's data to the readers of the main branch: it emits the table's Asset
    event (extra: ``snapshot_id`` of main after it, and the facts of that snapshot's commit, ``commit_kind``,
    ``added_rows``...), also when a later try finds it done (the earlier try may have died before its event).

    :param branch: the branch to publish (templated).
    :param check_unchanged: refuse when the table moved on since the branch was made (templated; default True).
    """

    writes_table = True
    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "branch", "check_unchanged")

    def __init__(self, *, branch: str, check_unchanged: bool | str = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.check_unchanged = check_unchanged

    def build_command(self, warehouse: str) -> FastForward:
        from table_engine.ops import FastForward

        return FastForward(warehouse=warehouse, table=self.table,
                           branch=_name(self.branch, "a branch name", self.command),
                           check_unchanged=as_bool(self.check_unchanged))

    def result_changed_data(self, result: Mapping[str, Any] | None) -> bool:
        """Main now shows the branch's snapshot: data for its readers (a branch without snapshots publishes none)."""
        return snapshot_id_of(result) is not None
