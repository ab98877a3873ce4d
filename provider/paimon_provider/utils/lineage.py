"""OpenLineage datasets of Paimon tables: how they are named, and which tables and paths a command reads and writes.

One place decides the names (docs/lineage.md, docs/adr/0028-openlineage-names-and-facets.md):

* a table's dataset: namespace = the warehouse URI (as the connection or the operator gives it, without a trailing
  ``/``), name = ``paimon.<database>.<table>`` (a branch: ``paimon.<database>.<table>$branch_<name>``): the names
  Paimon's own Flink lineage gives (``LineageUtils``: namespace = the catalog's ``warehouse``, name =
  ``<catalog>.<database>.<table>``, catalog ``paimon``), so lineage from Flink jobs and from Airflow joins;
* its ``symlinks`` facet names the table's storage location as OpenLineage names a path (``s3://bucket`` +
  ``key``, ``file`` + ``/abs/path``, ``hdfs://host:port`` + ``/path``), type ``LOCATION``;
* facets ``schema`` (Paimon's SQL types as text), ``version`` (the snapshot id read or written), ``catalog``,
  ``storage`` (``paimon``), ``outputStatistics`` (rows, files, bytes a commit added), ``lifecycleStateChange``
  (:data:`LIFECYCLE`) and, for ``consume-changelog`` into a table, ``columnLineage``.

The part that decides *what* (:class:`TableRef`, :class:`PathRef`, :func:`command_io`) is plain Python; only
:func:`operator_lineage` and :func:`asset_to_openlineage` import OpenLineage, inside the functions: importing the
provider never imports it (it is optional: ``apache-airflow-providers-openlineage``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from paimon_provider.utils.assets import split_table

if TYPE_CHECKING:
    from table_engine.catalog import Catalog
    from table_engine.ops import Command

__all__ = ["CATALOG_NAME", "LIFECYCLE", "LineageIO", "PathRef", "TableRef", "asset_to_openlineage", "command_io",
           "dataset_name", "dataset_namespace", "location", "operator_lineage", "table_path"]

CATALOG_NAME = "paimon"
"""The catalog part of a dataset name: Paimon's default catalog name (its Flink lineage names ``<catalog>.db.t``)."""

BRANCH_MARK = "$branch_"
"""How a branch of a table is named (``db.t$branch_b``), as everywhere in Paimon."""

LIFECYCLE: Mapping[str, str] = {
    "drop-partitions": "TRUNCATE",
    "expire-partitions": "TRUNCATE",
    "rollback": "OVERWRITE",
    "fast-forward": "OVERWRITE",
    "create-branch": "CREATE",
    "delete-branch": "DROP",
    "rename-branch": "RENAME",
    "remove-unexisting-files": "TRUNCATE",
    "refresh-object-table": "OVERWRITE",
    "alter-table": "ALTER",
    "migrate-table": "CREATE",
}
"""OpenLineage's ``lifecycleStateChange`` of the dataset a command writes (docs/adr/0028): dropping or expiring
partitions removes part of the data (TRUNCATE), a rollback or fast-forward replaces the table's state (OVERWRITE),
branches are created, dropped and renamed, a schema change ALTERs the table; removing the entries of missing data
files drops their rows (TRUNCATE); ``migrate-table`` creates its table from the files it moves in (CREATE).
``write`` adds OVERWRITE for ``mode="overwrite"`` and CREATE when it
created the table. Snapshot, changelog and tag expiry, orphan cleaning, compaction (of data or manifests), consumer
resets, hint repairs and partition marks leave the table's data as it is: none."""

READ_ONLY = frozenset({"check", "health", "history"})
"""Commands that only read their table (it is their input, not an output)."""


@dataclass(frozen=True)
class TableRef:
    """A Paimon table (or branch) a command reads or writes, with what is known of it after the job.

    :param table: ``database.table`` (a branch: ``database.table$branch_<name>``).
    :param snapshot_id: the snapshot read or written (the ``version`` facet).
    :param lifecycle: one of OpenLineage's ``LifecycleStateChange`` names.
    :param previous: a renamed dataset's previous table (``lifecycle`` RENAME).
    :param statistics: the commit facts (:func:`table_engine.ops.facts.commit_facts`): ``outputStatistics``.
    :param columns_from: the table whose same-named columns this one's come from (``columnLineage``).
    :param assertions: see below.
    """

    table: str
    snapshot_id: int | None = None
    lifecycle: str | None = None
    previous: str | None = None
    statistics: Mapping[str, Any] = field(default_factory=dict)
    columns_from: str | None = None
    assertions: tuple[Mapping[str, Any], ...] = ()
    """Data-quality check results on this input (``check``'s ``checks``, each with its definition's ``column``):
    the ``dataQualityAssertions`` facet."""


@dataclass(frozen=True)
class PathRef:
    """Files a command reads or writes (``write``'s ``source``, ``consume-changelog``'s ``output``)."""

    uri: str


Ref = TableRef | PathRef


@dataclass(frozen=True)
class LineageIO:
    """What a command read (inputs) and wrote (outputs)."""

    inputs: tuple[Ref, ...] = ()
    outputs: tuple[Ref, ...] = ()


# ---- names ----------------------------------------------------------------------------------------------------
def dataset_namespace(warehouse: str) -> str:
    """The namespace of every table of ``warehouse``: its URI as configured, without a trailing ``/``."""
    text = warehouse.strip()
    return text.rstrip("/") or text


def _base_and_branch(table: str) -> tuple[str, str, str | None]:
    name, mark, branch = table.partition(BRANCH_MARK)
    db, t = split_table(name)
    return db, t, (branch if mark else None)


def dataset_name(table: str) -> str:
    """``paimon.<database>.<table>`` (a branch keeps its ``$branch_<name>`` suffix)."""
    db, t, branch = _base_and_branch(table)
    return f"{CATALOG_NAME}.{db}.{t}" + (f"{BRANCH_MARK}{branch}" if branch else "")


def table_path(warehouse: str, table: str) -> str:
    """The table's directory, ``<warehouse>/<database>.db/<table>`` (a branch lives in its table's directory)."""
    db, t, _ = _base_and_branch(table)
    return f"{dataset_namespace(warehouse)}/{db}.db/{t}"


def location(uri: str) -> tuple[str, str]:
    """OpenLineage's (namespace, name) of a path (its naming spec): ``s3://bucket`` + ``key`` (``s3a``/``s3n`` are
    ``s3``), ``hdfs://host:port`` + ``/path``, ``file`` + ``/absolute/path`` for local paths."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return "file", parts.path
    if scheme == "":
        return "file", os.path.abspath(uri)
    if scheme in ("s3a", "s3n"):
        scheme = "s3"
    if scheme in ("s3", "gs", "oss", "cos", "obs"):
        return f"{scheme}://{parts.netloc}", parts.path.lstrip("/")
    return f"{scheme}://{parts.netloc}", parts.path or "/"


# ---- what a command reads and writes --------------------------------------------------------------------------
def _database_io(name: str, res: Mapping[str, Any]) -> LineageIO:
    """A command whose "table" is a database: its outputs are the tables it compacted, or made (CREATE)."""
    if name == "migrate-database":
        migrated = res.get("migrated")
        made = migrated.items() if isinstance(migrated, Mapping) else ()
        return LineageIO((), tuple(TableRef(str(t), _int(m.get("snapshot_id")) if isinstance(m, Mapping) else None,
                                            "CREATE") for t, m in made))
    snapshots = res.get("snapshots")
    done = snapshots.items() if isinstance(snapshots, Mapping) else ()
    return LineageIO((), tuple(TableRef(str(t), _int(sid)) for t, sid in done))


def _clone_io(cmd: Command, res: Mapping[str, Any]) -> LineageIO:
    """``clone`` reads its tables (the snapshot each cloned, once it ran); its outputs are in another warehouse
    (another namespace, with its own catalog options): not reported."""
    cloned = res.get("tables")
    done = [t for t in cloned if isinstance(t, Mapping)] if isinstance(cloned, list) else []
    if done:
        return LineageIO(tuple(TableRef(str(t["source"]), _int(t.get("source_snapshot_id"))) for t in done), ())
    return LineageIO((TableRef(cmd.table),) if "." in cmd.table else (), ())


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _branch_of(table: str, branch: str) -> str:
    base = table.partition(BRANCH_MARK)[0]
    return f"{base}{BRANCH_MARK}{branch}"


def command_io(cmd: Command, result: Mapping[str, Any] | None) -> LineageIO:
    """The tables and paths ``cmd`` reads and writes, from its definition (its ``table``, and the fields naming
    other data: ``source``, ``output``, ``target_table``, ``branch``/``to``) and, when it ran, its result line
    (snapshot ids, commit facts). Without a result (a task starting, or failed) the same datasets without
    versions or statistics."""
    res: Mapping[str, Any] = result or {}
    commit = res.get("commit") if isinstance(res.get("commit"), Mapping) else {}
    facts: Mapping[str, Any] = commit or {}
    fields = cmd.to_dict()
    name = cmd.name
    inputs: list[Ref] = []
    outputs: list[Ref] = []
    own_snapshot = _int(res.get("snapshot_id"))
    if name in ("create-branch", "delete-branch", "rename-branch"):
        branch = _branch_of(cmd.table, str(fields["to"] if name == "rename-branch" else fields["branch"]))
        if name == "create-branch":
            inputs.append(TableRef(cmd.table))
        previous = _branch_of(cmd.table, str(fields["branch"])) if name == "rename-branch" else None
        outputs.append(TableRef(branch, own_snapshot, LIFECYCLE[name] if result is not None else None, previous))
        return LineageIO(tuple(inputs), tuple(outputs))
    if name == "clone":
        return _clone_io(cmd, res)
    if name in ("compact-database", "migrate-database"):
        return _database_io(name, res)
    if name == "fast-forward":
        inputs.append(TableRef(_branch_of(cmd.table, str(fields["branch"])), own_snapshot))
    output, target = fields.get("output"), fields.get("target_table")
    inputs.extend(_sources(name, fields, res))
    # a table's lifecycle changes only with a snapshot committed (a dry run, nothing expired or dropped: none)
    lifecycle = LIFECYCLE.get(name) if own_snapshot is not None else None
    if name == "alter-table":  # a new schema, no snapshot
        lifecycle = LIFECYCLE[name] if res.get("schema_id") is not None else None
    if name == "write" and own_snapshot is not None:
        lifecycle = "CREATE" if res.get("created") else ("OVERWRITE" if fields.get("mode") == "overwrite" else None)
    if isinstance(target, str) and target:
        inputs.append(TableRef(cmd.table, _int(res.get("to_snapshot"))))
        outputs.append(TableRef(target, _int(res.get("target_snapshot_id")), statistics=facts,
                                columns_from=cmd.table))
    elif isinstance(output, str) and output:
        inputs.append(TableRef(cmd.table, _int(res.get("to_snapshot"))))
        outputs.append(PathRef(output))
    elif name in READ_ONLY:
        inputs.append(TableRef(cmd.table, own_snapshot, assertions=_assertions(fields.get("checks"),
                                                                               res.get("checks"))))
    else:
        outputs.append(TableRef(cmd.table, own_snapshot, lifecycle, statistics=facts))
    return LineageIO(tuple(inputs), tuple(outputs))


def _sources(name: str, fields: Mapping[str, Any], res: Mapping[str, Any]) -> list[Ref]:
    """What a command reads besides its table: ``source`` files (an object table's location, known from the
    result), a ``source_table`` of the same catalog (merge-into's)."""
    out: list[Ref] = []
    source = res.get("location") if name == "refresh-object-table" else fields.get("source")
    if isinstance(source, str) and source:
        out.append(PathRef(source))
    source_table = fields.get("source_table")
    if isinstance(source_table, str) and source_table:
        out.append(TableRef(source_table))
    return out


def _assertions(definitions: object, results: object) -> tuple[Mapping[str, Any], ...]:
    """A check job's results (in the order of its definitions), each with its definition's ``column``."""
    if not isinstance(results, list):
        return ()
    defs = definitions if isinstance(definitions, list) and len(definitions) == len(results) else [{}] * len(results)
    return tuple({**r, "column": d.get("column") if isinstance(d, Mapping) else None}
                 for r, d in zip(results, defs, strict=True) if isinstance(r, Mapping))


# ---- OpenLineage ----------------------------------------------------------------------------------------------
def _open(catalog: Catalog | None, table: str) -> Any:
    """The engine's table, or None (no catalog, or the table or branch does not exist: dropped, not created)."""
    if catalog is None:
        return None
    try:
        return catalog.get_table(table)
    except Exception:  # noqa: BLE001 - lineage is best effort: a table that cannot be read gets no schema facet
        return None


def _dataset_facets(warehouse: str, ref: TableRef, table: Any, catalog: Catalog | None) -> dict[str, Any]:
    from openlineage.client.generated.dataset_version_dataset import DatasetVersionDatasetFacet
    from openlineage.client.generated.lifecycle_state_change_dataset import (
        LifecycleStateChange,
        LifecycleStateChangeDatasetFacet,
        PreviousIdentifier,
    )
    from openlineage.client.generated.schema_dataset import SchemaDatasetFacet, SchemaDatasetFacetFields
    from openlineage.client.generated.storage_dataset import StorageDatasetFacet
    from openlineage.client.generated.symlinks_dataset import Identifier, SymlinksDatasetFacet

    namespace = dataset_namespace(warehouse)
    loc_ns, loc_name = location(table_path(warehouse, ref.table))
    facets: dict[str, Any] = {
        "symlinks": SymlinksDatasetFacet(identifiers=[Identifier(namespace=loc_ns, name=loc_name, type="LOCATION")]),
    }
    try:  # the catalog facet is recent: older OpenLineage clients lack it (the other facets are kept)
        from openlineage.client.generated.catalog_dataset import CatalogDatasetFacet
    except ImportError:
        pass
    else:
        facets["catalog"] = CatalogDatasetFacet(framework="paimon", type="filesystem", name=CATALOG_NAME,
                                                warehouseUri=namespace, source="paimon")
    snapshot_id = ref.snapshot_id
    if table is not None:
        schema = table.schema
        facets["schema"] = SchemaDatasetFacet(fields=[
            SchemaDatasetFacetFields(name=f.name, type=str(f.type), description=f.description, ordinal_position=i)
            for i, f in enumerate(schema.fields, 1)])
        facets["storage"] = StorageDatasetFacet(storageLayer="paimon",
                                                fileFormat=str(schema.options.get("file.format", "parquet")))
        if snapshot_id is None and ref.lifecycle not in ("DROP",):
            try:
                snapshot_id = table.latest_snapshot_id()
            except Exception:  # noqa: BLE001 - best effort, as above
                snapshot_id = None
    if snapshot_id is not None:
        facets["version"] = DatasetVersionDatasetFacet(datasetVersion=str(snapshot_id))
    if ref.lifecycle is not None:
        previous = None
        if ref.previous is not None:
            previous = PreviousIdentifier(name=dataset_name(ref.previous), namespace=namespace)
        facets["lifecycleStateChange"] = LifecycleStateChangeDatasetFacet(
            lifecycleStateChange=LifecycleStateChange[ref.lifecycle], previousIdentifier=previous)
    if ref.columns_from is not None and table is not None:
        from openlineage.client.generated.column_lineage_dataset import (
            ColumnLineageDatasetFacet,
            Fields,
            InputField,
            Transformation,
        )

        source = _open(catalog, ref.columns_from)
        source_columns = set(source.schema.field_names()) if source is not None else set()
        fields = {c: Fields(inputFields=[InputField(
                      namespace=namespace, name=dataset_name(ref.columns_from), field=c,
                      transformations=[Transformation(type="DIRECT", subtype=subtype, description=how)])])
                  for c in table.schema.field_names() if c in source_columns
                  for subtype, how in [_column_transformation(table, c)]}
        if fields:
            facets["columnLineage"] = ColumnLineageDatasetFacet(fields=fields)
    return facets


def _column_transformation(table: Any, column: str) -> tuple[str, str]:
    """How a changelog applied to ``table`` makes ``column``: as is (IDENTITY: the key, and every column the merge
    engine does not aggregate), or by the aggregate function the merge engine combines it with (AGGREGATION: an
    aggregation table's value columns, ``fields.<column>.aggregate-function`` else the default; a partial-update
    table's columns given a function)."""
    from table_engine import column_functions

    function = column_functions(table.schema).get(column)
    if function is None:
        return "IDENTITY", "changes applied by key"
    return "AGGREGATION", f"{function} of the changes by key"


def _output_statistics(facts: Mapping[str, Any]) -> dict[str, Any]:
    from openlineage.client.generated.output_statistics_output_dataset import OutputStatisticsOutputDatasetFacet

    rows, files, size = _int(facts.get("added_rows")), _int(facts.get("added_files")), _int(facts.get("added_bytes"))
    if rows is None and files is None and size is None:
        return {}
    return {"outputStatistics": OutputStatisticsOutputDatasetFacet(rowCount=rows, size=size, fileCount=files)}


def _quality(assertions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``dataQualityAssertions`` input facet of check results: the check kind, whether it passed, its column;
    its name, expected and observed values where the client's facet has those fields."""
    if not assertions:
        return {}
    import attr
    from openlineage.client.generated.data_quality_assertions_dataset import (
        Assertion,
        DataQualityAssertionsDatasetFacet,
    )

    known = attr.fields_dict(Assertion)

    def one(a: Mapping[str, Any]) -> Any:
        more = {"name": a.get("name"), "expected": a.get("expected"), "actual": a.get("observed"),
                "description": a.get("message")}
        extra: dict[str, Any] = {k: None if v is None else str(v) for k, v in more.items() if k in known}
        return Assertion(assertion=str(a.get("check")), success=bool(a.get("passed")), column=a.get("column"),
                         **extra)

    return {"dataQualityAssertions": DataQualityAssertionsDatasetFacet(assertions=[one(a) for a in assertions])}


def operator_lineage(warehouse: str, io: LineageIO, catalog: Catalog | None = None,
                     run_facets: Mapping[str, Any] | None = None) -> Any:
    """The ``OperatorLineage`` of ``io`` on ``warehouse``; ``catalog`` (optional) reads each table's schema and
    latest snapshot (a table it cannot read gets neither)."""
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.generated.base import InputDataset, OutputDataset

    namespace = dataset_namespace(warehouse)

    def build(ref: Ref, output: bool) -> Any:
        if isinstance(ref, PathRef):
            ns, name = location(ref.uri)
            return OutputDataset(namespace=ns, name=name) if output else InputDataset(namespace=ns, name=name)
        facets = _dataset_facets(warehouse, ref, _open(catalog, ref.table), catalog)
        if output:
            return OutputDataset(namespace=namespace, name=dataset_name(ref.table), facets=facets,
                                 outputFacets=_output_statistics(ref.statistics))
        return InputDataset(namespace=namespace, name=dataset_name(ref.table), facets=facets,
                            inputFacets=_quality(ref.assertions))

    return OperatorLineage(inputs=[build(r, False) for r in io.inputs], outputs=[build(r, True) for r in io.outputs],
                           run_facets=dict(run_facets or {}))


def without_versions(io: LineageIO) -> LineageIO:
    """``io`` as known before a job ran: the same datasets, no snapshot ids, statistics or lifecycle changes."""
    def strip(refs: Sequence[Ref]) -> tuple[Ref, ...]:
        return tuple(replace(r, snapshot_id=None, statistics={}, lifecycle=None, previous=None)
                     if isinstance(r, TableRef) else r for r in refs)

    return LineageIO(strip(io.inputs), strip(io.outputs))


# ---- Assets ---------------------------------------------------------------------------------------------------
def asset_to_openlineage(asset: Any, lineage_context: Any = None) -> Any:
    """Provider info ``asset-uris`` ``to_openlineage_converter``: a ``paimon://<conn>/<db>/<table>`` Asset as the
    table's dataset (:func:`dataset_namespace` of the connection's warehouse, :func:`dataset_name`) with the facets
    known without reading the warehouse (``symlinks``, ``catalog``), as a task's START event names it. The
    connection cannot be read (not defined here): namespace ``paimon://<conn>`` (the Asset's own), a warning."""
    import logging

    from openlineage.client.generated.base import Dataset

    parts = urlsplit(asset.uri)
    segments = [p for p in parts.path.split("/") if p]
    if len(segments) != 2:
        raise ValueError(f"not a paimon table asset URI: {asset.uri!r}")
    table = ".".join(segments)
    try:
        from paimon_provider.hooks.table import load_connection_config

        warehouse = load_connection_config(parts.netloc).warehouse
    except Exception as e:  # noqa: BLE001 - any failure to resolve the connection: the Asset's own namespace
        logging.getLogger(__name__).warning("paimon asset %s: connection %r not readable (%s): OpenLineage "
                                            "namespace paimon://%s", asset.uri, parts.netloc, e, parts.netloc)
        return Dataset(namespace=f"paimon://{parts.netloc}", name=dataset_name(table))
    return Dataset(namespace=dataset_namespace(warehouse), name=dataset_name(table),
                   facets=_dataset_facets(warehouse, TableRef(table), None, None))
