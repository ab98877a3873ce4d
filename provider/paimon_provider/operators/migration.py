"""Copying tables between warehouses: ``PaimonCloneOperator`` (the ``clone`` command, Paimon's ``clone``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import PaimonSparkOperator
from paimon_provider.utils.arguments import as_optional_int, as_optional_text

if TYPE_CHECKING:
    from table_engine.ops import Clone

__all__ = ["PaimonCloneOperator"]


class PaimonCloneOperator(PaimonSparkOperator["Clone"]):
    """Paimon's ``clone``: copy ``table`` (or, given a database name, every table of it matching
    ``including_tables`` and not ``excluding_tables``) to ``target_warehouse``: the schemas and the data files of
    its latest snapshot (or ``snapshot`` / ``tag``), then one snapshot there that publishes them, so readers of the
    copy never see it half-copied. A re-run (or a retry) copies only the data files the copy lacks and publishes the
    newer snapshot. Runs with the engine on the worker (file copies, no Spark); the log shows the files and bytes
    copied. XCom ``return_value``: each table's ``source_snapshot_id``, ``snapshot_id``, ``files_copied``,
    ``bytes_copied``. A target table holding data a clone did not write, external data paths and index files are
    refused before anything is copied (docs/lifecycle.md, "Clone").

    :param target_warehouse: the copy's warehouse path or URI (templated).
    :param target_table: ``database.table`` of the copy, or its database for a database clone (templated; default:
        the source's names).
    :param target_catalog_options: catalog options of the target warehouse (``s3.endpoint``...) (templated).
    :param snapshot: clone this snapshot id (templated).
    :param tag: clone the snapshot of this tag (templated).
    :param including_tables: database clone: regular expression of the full names to clone (templated).
    :param excluding_tables: database clone: regular expression of the full names not to clone (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "target_warehouse", "target_table",
                                      "target_catalog_options", "snapshot", "tag", "including_tables",
                                      "excluding_tables")
    ui_color = "#e8dcf5"

    def __init__(self, *, target_warehouse: str, target_table: str | None = None,
                 target_catalog_options: Mapping[str, str] | None = None, snapshot: int | str | None = None,
                 tag: str | None = None, including_tables: str | None = None, excluding_tables: str | None = None,
                 **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # file copies and one commit: the engine on the worker, never Spark
        super().__init__(spark=spark, **kwargs)
        self.target_warehouse, self.target_table = target_warehouse, target_table
        self.target_catalog_options = dict(target_catalog_options or {})
        self.snapshot, self.tag = snapshot, tag
        self.including_tables, self.excluding_tables = including_tables, excluding_tables

    def build_command(self, warehouse: str) -> Clone:
        from table_engine.ops import Clone

        return Clone(warehouse=warehouse, table=self.table, target_warehouse=self.target_warehouse,
                     target_table=as_optional_text(self.target_table),
                     target_catalog_options={str(k): str(v) for k, v in self.target_catalog_options.items()},
                     snapshot=as_optional_int(self.snapshot, "snapshot"), tag=as_optional_text(self.tag),
                     including_tables=as_optional_text(self.including_tables),
                     excluding_tables=as_optional_text(self.excluding_tables))
