"""Drive pypaimon 2.1.0 from its own virtualenv (run by ``.venv-pypaimon/bin/python``, never by the project venv).

This script imports pypaimon and must never import ``table_engine``. It runs under pypaimon's pinned pyarrow (<20),
so it only uses long-stable pyarrow APIs. Data crosses the process boundary as Arrow IPC *files* so that types
(decimal precision, timestamp unit/zone, nullability) survive exactly.

Commands (argparse form, or one JSON object / a list of them via ``--json '<json>'`` or ``-`` for stdin):

  read      --warehouse W --table db.t [--snapshot N | --tag T] --out result.arrow
            Full merged scan with pypaimon; writes the rows to an Arrow IPC file (empty tables keep the schema).
            In JSON form, "catalog_options" (e.g. fs.s3.* for an s3:// warehouse) go to the catalog (never argv).
  write     --warehouse W --spec spec.json
            spec = {"table": "db.t", "schema": "schema.arrow", "primary_keys": [...], "partition_keys": [...],
                    "options": {...}, "batches": ["b0.arrow", ...], "create": true, "tags": {"t1": 2}}
            Creates the table (schema = the schema of the IPC file) unless create=false, then commits each batch
            file in its own commit (deletes/updates via the table's ``rowkind.field`` column). ``tags`` maps a tag
            name to the 1-based commit after which it is created. Optional "properties": one snapshot properties
            map (or null) per batch, given to the commit.
  schema    --warehouse W --table db.t [--out empty.arrow]
            The table schema as JSON (and pypaimon's Arrow read schema as an empty IPC file).
  snapshots --warehouse W --table db.t
            The table's snapshots as JSON (id, schemaId, commitKind, record counts, properties).
  gate_tables --warehouse W
            Tables with BLOB / VARIANT / VECTOR columns, row tracking, data evolution and a global index (the
            features the engine's capability gate refuses; see cmd_gate_tables).
  new_type_tables --warehouse W --out DIR
            Tables with VARIANT and VECTOR columns (append, primary key, VARIANT shredding); see
            cmd_new_type_tables.
  read_blob_files --warehouse W --table db.t --files F...
            pypaimon's reader over .blob files; see cmd_read_blob_files.
  blob_table --warehouse W --out F
            A BLOB table in three commits (appends, an update by row id); see cmd_blob_table.
  blob_write_tables --warehouse W --out D
            That BLOB table and one with rolled .blob files; see cmd_blob_write_tables.
  data_evolution  (JSON only) --warehouse W --out_dir D --tables [...]
            Data-evolution tables built by sequences of writes, updates by row id, upserts by key, writes of some
            columns and deletes; each read back by pypaimon with ``_ROW_ID`` (see cmd_data_evolution).
  data_evolution_bench  (JSON only) --warehouse W --rows N
            The data-evolution benchmark's tables (see cmd_data_evolution_bench).
  bench     --spec spec.json
            spec = {"warehouse": W, "table": "db.t", "data": "data.arrow", "upsert": "upsert.arrow",
                    "primary_keys": ["id"], "options": {"bucket": "4"}}
            Creates the table, then times (inside this process) write / upsert / full merged read.

Each command prints one line ``@@RESULT@@ <json>`` on stdout (the last such line is the answer); a JSON list of
commands prints ``@@RESULT@@ [<result>, ...]``. Errors exit non-zero with a traceback on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
from pypaimon import CatalogFactory, Schema
from pypaimon.schema.data_types import PyarrowFieldParser

RESULT_PREFIX = "@@RESULT@@ "


# --------------------------------------------------------------------------------------------------------- helpers


def _catalog(warehouse: str, catalog_options: dict[str, str] | None = None) -> Any:
    return CatalogFactory.create({**(catalog_options or {}), "warehouse": warehouse})


def _read_ipc(path: str) -> pa.Table:
    with pa.OSFile(path, "rb") as source:
        return ipc.open_file(source).read_all()


def _write_ipc(table: pa.Table, path: str) -> None:
    with pa.OSFile(path, "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _ensure_database(catalog: Any, identifier: str) -> None:
    database = identifier.split(".", 1)[0]
    catalog.create_database(database, True)


def _latest_snapshot_id(table: Any) -> int | None:
    snapshot = table.snapshot_manager().get_latest_snapshot()
    return None if snapshot is None else int(snapshot.id)


def _commit(table: Any, data: pa.Table, properties: dict[str, str] | None = None) -> None:
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    commit = builder.new_commit()
    try:
        write.write_arrow(data)
        if properties:
            commit.commit(write.prepare_commit(), snapshot_properties=properties)
        else:
            commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()


def _scan(table: Any) -> pa.Table:
    builder = table.new_read_builder()
    splits = builder.new_scan().plan().splits()
    result = builder.new_read().to_arrow(splits)
    if result is None:  # pypaimon returns None when there is nothing to read
        result = PyarrowFieldParser.from_paimon_schema(builder.read_type()).empty_table()
    return result


def _time_travel(table: Any, snapshot: int | None, tag: str | None) -> Any:
    if snapshot is not None and tag is not None:
        raise ValueError("give at most one of snapshot / tag")
    if snapshot is not None:
        return table.copy({"scan.snapshot-id": str(snapshot)})
    if tag is not None:
        return table.copy({"scan.tag-name": tag})
    return table


# -------------------------------------------------------------------------------------------------------- commands


def cmd_read(args: dict[str, Any]) -> dict[str, Any]:
    table = _catalog(args["warehouse"], args.get("catalog_options")).get_table(args["table"])
    table = _time_travel(table, args.get("snapshot"), args.get("tag"))
    result = _scan(table)
    _write_ipc(result, args["out"])
    return {"rows": result.num_rows, "out": args["out"]}


def cmd_write(args: dict[str, Any]) -> dict[str, Any]:
    spec = args.get("spec_data")
    if spec is None:
        with open(args["spec"]) as f:
            spec = json.load(f)
    catalog = _catalog(args["warehouse"])
    identifier = spec["table"]
    if spec.get("create", True):
        _ensure_database(catalog, identifier)
        with pa.OSFile(spec["schema"], "rb") as source:
            arrow_schema = ipc.open_file(source).schema
        schema = Schema.from_pyarrow_schema(
            arrow_schema,
            partition_keys=spec.get("partition_keys") or None,
            primary_keys=spec.get("primary_keys") or None,
            options=dict(spec.get("options") or {}),
        )
        catalog.create_table(identifier, schema, False)
    table = catalog.get_table(identifier)
    tags = {int(after): name for name, after in (spec.get("tags") or {}).items()}
    snapshot_ids = []
    properties = spec.get("properties") or []
    for number, path in enumerate(spec.get("batches") or [], start=1):
        _commit(table, _read_ipc(path), properties[number - 1] if number <= len(properties) else None)
        snapshot_ids.append(_latest_snapshot_id(table))
        if number in tags:
            table.create_tag(tags[number], snapshot_id=snapshot_ids[-1])
    return {"snapshot_ids": snapshot_ids}


def cmd_schema(args: dict[str, Any]) -> dict[str, Any]:
    table = _catalog(args["warehouse"]).get_table(args["table"])
    schema = table.table_schema
    arrow_schema = PyarrowFieldParser.from_paimon_schema(table.new_read_builder().read_type())
    if args.get("out"):
        _write_ipc(arrow_schema.empty_table(), args["out"])
    return {
        "id": schema.id,
        "fields": [{"id": f.id, "name": f.name, "type": str(f.type)} for f in schema.fields],
        "partition_keys": list(schema.partition_keys),
        "primary_keys": list(schema.primary_keys),
        "options": dict(schema.options),
        "arrow_types": [str(f.type) for f in arrow_schema],
    }


def cmd_snapshots(args: dict[str, Any]) -> dict[str, Any]:
    table = _catalog(args["warehouse"]).get_table(args["table"])
    manager = table.snapshot_manager()
    latest = _latest_snapshot_id(table)
    snapshots = []
    for snapshot_id in range(1, (latest or 0) + 1):
        snapshot = manager.get_snapshot_by_id(snapshot_id)
        if snapshot is None:
            continue
        snapshots.append(
            {
                "id": snapshot.id,
                "schemaId": snapshot.schema_id,
                "commitKind": snapshot.commit_kind,
                "totalRecordCount": snapshot.total_record_count,
                "deltaRecordCount": snapshot.delta_record_count,
                "properties": snapshot.properties,
            }
        )
    return {"latest": latest, "snapshots": snapshots}


def cmd_bench(args: dict[str, Any]) -> dict[str, Any]:
    spec = args.get("spec_data")
    if spec is None:
        with open(args["spec"]) as f:
            spec = json.load(f)
    data = _read_ipc(spec["data"])
    upsert = _read_ipc(spec["upsert"])
    catalog = _catalog(spec["warehouse"])
    identifier = spec.get("table", "bench.t")
    _ensure_database(catalog, identifier)

    catalog.create_table(
        identifier,
        Schema.from_pyarrow_schema(
            data.schema, primary_keys=spec.get("primary_keys") or ["id"], options=dict(spec.get("options") or {})
        ),
        False,
    )
    table = catalog.get_table(identifier)
    start = time.perf_counter()
    _commit(table, data)
    write_s = time.perf_counter() - start

    start = time.perf_counter()
    _commit(table, upsert)
    upsert_s = time.perf_counter() - start

    start = time.perf_counter()
    result = _scan(catalog.get_table(identifier))
    read_s = time.perf_counter() - start
    return {
        "write_s": write_s,
        "upsert_s": upsert_s,
        "read_s": read_s,
        "rows_written": data.num_rows,
        "rows_upserted": upsert.num_rows,
        "rows_read": result.num_rows,
        "pyarrow_version": pa.__version__,
    }


# ------------------------------------------------------------------------- tables of features the gate refuses


def _feature_table(catalog: Any, name: str, schema: pa.Schema, options: dict[str, str],
                   commits: list[pa.Table]) -> Any:
    catalog.create_table(name, Schema.from_pyarrow_schema(schema, options=options), False)
    table = catalog.get_table(name)
    for data in commits:
        _commit(table, data)
    return table


def cmd_gate_tables(args: dict[str, Any]) -> dict[str, Any]:
    """Tables with the features of Paimon 1.1-2.0 that the engine's capability gate refuses, in one warehouse:
    ``db.blob`` (BLOB column, two commits), ``db.variant`` (VARIANT), ``db.vector`` (VECTOR<FLOAT, 3>),
    ``db.row_tracking`` (two commits), ``db.data_evolution`` (an update of column ``y`` by row id) and
    ``db.global_index`` (row tracking and a BTree global index on ``id``), ``db.pk_index`` (a primary-key table with
    ``pk-btree.index.columns``). Returns the tables' names and their rows
    as pypaimon reads them."""
    from pypaimon.schema.data_types import AtomicType, DataField

    catalog = _catalog(args["warehouse"])
    catalog.create_database("db", True)
    rt = {"row-tracking.enabled": "true"}
    de = {**rt, "data-evolution.enabled": "true"}
    blob = pa.schema([("id", pa.int64()), ("b", pa.large_binary())])
    _feature_table(catalog, "db.blob", blob, de, [pa.table({"id": [1, 2], "b": [b"x", b"y"]}, schema=blob),
                                                 pa.table({"id": [3], "b": [b"z"]}, schema=blob)])
    vector = pa.schema([("id", pa.int64()), ("v", pa.list_(pa.float32(), 3))])
    _feature_table(catalog, "db.vector", vector, {}, [pa.table({"id": [1], "v": [[1.0, 2.0, 3.0]]}, schema=vector)])
    catalog.create_table("db.variant", Schema(fields=[DataField(0, "id", AtomicType("BIGINT")),
                                                      DataField(1, "v", AtomicType("VARIANT"))], options={}), False)
    value = pa.struct([pa.field("value", pa.binary(), False), pa.field("metadata", pa.binary(), False)])
    _commit(catalog.get_table("db.variant"), pa.table(
        {"id": [1], "v": [{"value": b"\x0c\x01", "metadata": b"\x01\x00\x00"}]},
        schema=pa.schema([("id", pa.int64()), ("v", value)])))
    plain = pa.schema([("id", pa.int64()), ("x", pa.string()), ("y", pa.int32())])
    rows = pa.table({"id": [1, 2, 3], "x": ["a", "b", "c"], "y": [1, 2, 3]}, schema=plain)
    more = pa.table({"id": [4], "x": ["d"], "y": [4]}, schema=plain)
    _feature_table(catalog, "db.row_tracking", plain, rt, [rows, more])
    evo = _feature_table(catalog, "db.data_evolution", plain, de, [rows])
    builder = evo.new_batch_write_builder()
    update = builder.new_update().with_update_type(["y"])
    commit = builder.new_commit()
    try:
        commit.commit(update.update_by_arrow_with_row_id(
            pa.table({"_ROW_ID": pa.array([0, 2], pa.int64()), "y": pa.array([10, 30], pa.int32())})))
    finally:
        commit.close()
    _feature_table(catalog, "db.global_index", plain, rt, [rows]).create_global_index("id", "btree")
    keyed = pa.schema([pa.field("id", pa.int64(), False), ("x", pa.string()), ("y", pa.int32())])
    catalog.create_table("db.pk_index", Schema.from_pyarrow_schema(
        keyed, primary_keys=["id"], options={"bucket": "1", "pk-btree.index.columns": "x"}), False)
    _commit(catalog.get_table("db.pk_index"), rows.cast(keyed))
    names = ["db.blob", "db.variant", "db.vector", "db.row_tracking", "db.data_evolution", "db.global_index",
             "db.pk_index"]
    read = {n: _scan(catalog.get_table(n)).num_rows for n in names if n not in ("db.variant",)}
    return {"tables": names, "rows": read}


_PREDICATES = {"=": "equal", "<": "less_than", "<=": "less_or_equal", ">": "greater_than", ">=": "greater_or_equal",
               "in": "is_in"}


def _de_rows(table: Any, rows: dict[str, list[Any]]) -> pa.Table:
    """Inline JSON columns as an Arrow table typed by the table's schema (``_ROW_ID``: BIGINT)."""
    schema = PyarrowFieldParser.from_paimon_schema(table.fields)
    fields = [pa.field("_ROW_ID", pa.int64(), False) if name == "_ROW_ID" else schema.field(name) for name in rows]
    return pa.table({name: pa.array(values, f.type) for (name, values), f in zip(rows.items(), fields)},
                    schema=pa.schema(fields))


def _de_op(catalog: Any, name: str, op: dict[str, Any]) -> None:
    table = catalog.get_table(name)
    kind = op["op"]
    if kind == "add_column":
        from pypaimon.schema.data_types import AtomicType
        from pypaimon.schema.schema_change import SchemaChange

        catalog.alter_table(name, [SchemaChange.add_column(op["column"], AtomicType(op["type"]))], False)
        return
    builder = table.new_batch_write_builder()
    commit = builder.new_commit()
    try:
        if kind == "write":
            write = builder.new_write()
            try:
                if op.get("cols"):
                    write.with_write_type(op["cols"])
                write.write_arrow(_de_rows(table, op["rows"]))
                messages = write.prepare_commit()
            finally:
                write.close()
        else:
            update = builder.new_update()
            if op.get("cols"):
                update.with_update_type(op["cols"])
            if kind == "update":
                messages = update.update_by_arrow_with_row_id(_de_rows(table, op["rows"]))
            elif kind == "upsert":
                messages = update.upsert_by_arrow_with_key(_de_rows(table, op["rows"]), op["keys"])
            elif kind == "delete_rows":
                messages = update.delete_by_row_id(op["row_ids"])
            elif kind == "delete_where":
                column, cmp, value = op["where"]
                pred = getattr(update.new_predicate_builder(), _PREDICATES[cmp])(column, value)
                messages = update.delete_by_predicate(pred)
            else:
                raise ValueError(f"unknown data-evolution op {kind!r}")
        commit.commit(messages)
    finally:
        commit.close()


def cmd_data_evolution(args: dict[str, Any]) -> dict[str, Any]:
    """Data-evolution tables (row tracking + ``data-evolution.enabled``) built by sequences of operations, then read
    by pypaimon. ``tables``: a list of ``{"name": "db.t", "fields": [[name, arrow type name], ...], "options": {...},
    "partition_keys": [...], "ops": [...]}`` (``"create": false``: the table exists). Ops, one commit each:
    ``write`` (``rows``: JSON columns; ``cols``: with_write_type), ``update`` (rows with ``_ROW_ID``; ``cols``),
    ``upsert`` (rows, ``keys``; ``cols``), ``delete_rows`` (``row_ids``), ``delete_where`` (``where``: [column, op,
    value]), ``add_column`` (``column``, ``type``: a Paimon type; a schema change). ``names``: tables to read only
    (e.g. after the engine changed them). Writes each table's rows with ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` to
    ``<out_dir>/<name>.arrow``."""
    catalog = _catalog(args["warehouse"])
    catalog.create_database("db", True)
    names = []
    for spec in args.get("tables", []):
        name = spec["name"]
        schema = pa.schema([(n, getattr(pa, t)()) for n, t in spec["fields"]])
        options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", **spec.get("options", {})}
        if spec.get("create", True):
            catalog.create_table(name, Schema.from_pyarrow_schema(
                schema, partition_keys=spec.get("partition_keys"), options=options), False)
        for op in spec["ops"]:
            _de_op(catalog, name, op)
        names.append(name)
    out: dict[str, Any] = {}
    for name in names + list(args.get("names", [])):
        table = catalog.get_table(name)
        builder = table.new_read_builder().with_projection(["_ROW_ID", *table.field_names, "_SEQUENCE_NUMBER"])
        splits = builder.new_scan().plan().splits()
        result = builder.new_read().to_arrow(splits)
        path = f"{args['out_dir']}/{name}.arrow"
        _write_ipc(result, path)
        out[name] = {"rows": result.num_rows, "out": path}
    return out


def cmd_data_evolution_bench(args: dict[str, Any]) -> dict[str, Any]:
    """The data-evolution benchmark's tables: ``db.evolved`` = ``rows`` rows of 8 columns (``id``, ``c1``..``c7``)
    in one commit, then 4 updates by row id of columns ``c6`` and ``c7`` (2 each, of every ``stride``-th row: each
    writes one overlay file of its column over the whole row range); ``db.whole`` = the same final rows written as
    whole rows in one commit (the layout a compaction produces)."""
    import numpy as np

    rows, stride = int(args["rows"]), int(args.get("stride", 3))
    catalog = _catalog(args["warehouse"])
    catalog.create_database("db", True)
    rng = np.random.default_rng(11)
    ids = np.arange(rows, dtype=np.int64)
    data = pa.table({"id": ids, "c1": rng.integers(0, 1 << 40, rows), "c2": rng.random(rows),
                     "c3": pa.array(np.char.add("s-", (ids % 9973).astype(str)).astype(object), pa.string()),
                     "c4": rng.integers(0, 1000, rows).astype(np.int32), "c5": rng.random(rows),
                     "c6": rng.integers(0, 1 << 30, rows), "c7": rng.random(rows)})
    options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
    catalog.create_table("db.evolved", Schema.from_pyarrow_schema(data.schema, options=options), False)
    table = catalog.get_table("db.evolved")
    _commit(table, data)
    final = {"c6": data.column("c6").to_numpy().copy(), "c7": data.column("c7").to_numpy().copy()}
    for i, col in enumerate(["c6", "c7", "c6", "c7"]):
        picked = ids[i % stride::stride]
        values = (rng.integers(0, 1 << 30, len(picked)) if col == "c6" else rng.random(len(picked)))
        final[col][picked] = values
        builder = table.new_batch_write_builder()
        commit = builder.new_commit()
        try:
            update = pa.table({"_ROW_ID": pa.array(picked, pa.int64()),
                               col: pa.array(values, data.schema.field(col).type)})
            commit.commit(builder.new_update().with_update_type([col]).update_by_arrow_with_row_id(update))
        finally:
            commit.close()
    whole = data.set_column(6, "c6", pa.array(final["c6"])).set_column(7, "c7", pa.array(final["c7"]))
    catalog.create_table("db.whole", Schema.from_pyarrow_schema(data.schema, options=options), False)
    _commit(catalog.get_table("db.whole"), whole)
    return {"tables": ["db.evolved", "db.whole"], "rows": rows}


# ------------------------------------------------------------------------------------------------ row tracking


def cmd_rt_append(args: dict[str, Any]) -> dict[str, Any]:
    """Row tracking: create ``table`` with ``options`` (if given; ``partition_keys`` optional) from the schema of the
    first batch, then append each of ``batches`` (IPC files) in its own commit. Returns the new snapshot ids."""
    catalog = _catalog(args["warehouse"])
    _ensure_database(catalog, args["table"])
    batches = [_read_ipc(p) for p in args["batches"]]
    if args.get("options") is not None:
        catalog.create_table(args["table"], Schema.from_pyarrow_schema(
            batches[0].schema, partition_keys=args.get("partition_keys"), options=args["options"]), False)
    table = catalog.get_table(args["table"])
    ids = []
    for data in batches:
        _commit(table, data)
        ids.append(_latest_snapshot_id(table))
    return {"snapshot_ids": ids}


def cmd_rt_read(args: dict[str, Any]) -> dict[str, Any]:
    """Row tracking: every column of ``table`` and ``_ROW_ID``, ``_SEQUENCE_NUMBER`` as pypaimon reads them (IPC
    ``out``), and the latest snapshot's ``nextRowId``."""
    table = _catalog(args["warehouse"]).get_table(args["table"])
    names = [f.name for f in table.table_schema.fields] + ["_ROW_ID", "_SEQUENCE_NUMBER"]
    builder = table.new_read_builder().with_projection(names)
    result = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    if result is None:
        result = PyarrowFieldParser.from_paimon_schema(builder.read_type()).empty_table()
    _write_ipc(result, args["out"])
    snapshot = table.snapshot_manager().get_latest_snapshot()
    return {"rows": result.num_rows, "next_row_id": None if snapshot is None else snapshot.next_row_id}


# ------------------------------------------------------------------------------ tables with VARIANT and VECTOR


def cmd_new_type_tables(args: dict[str, Any]) -> dict[str, Any]:
    """Tables with VARIANT, VECTOR<FLOAT, 3> and VECTOR<BIGINT, 2> columns in one warehouse, three commits each:
    ``db.app`` (append), ``db.pk`` (primary key ``id``, 2 buckets, upserts) and ``db.shredded`` (one commit with
    ``variant.shreddingSchema`` shredding ``v.age``). Variants are pypaimon's ``GenericVariant`` encodings of small
    objects, some null; vectors are never null (pyarrow < 20 cannot read a null fixed-size list back from Parquet).
    Writes every committed batch of table ``db.x`` to ``<out>/x.arrow`` (in commit order)."""
    from pypaimon.data.generic_variant import GenericVariant

    catalog = _catalog(args["warehouse"])
    catalog.create_database("db", True)
    variant = pa.struct([pa.field("value", pa.binary(), False), pa.field("metadata", pa.binary(), False)])
    schema = pa.schema([("id", pa.int64()), ("v", variant), ("vec", pa.list_(pa.float32(), 3)),
                        ("iv", pa.list_(pa.int64(), 2))])

    def batch(ids: list[int], commit: int) -> pa.Table:
        vs = [None if i % 3 == 1 else GenericVariant.from_python({"age": i + commit, "name": f"n{i}", "tags": [i]})
              for i in ids]
        return pa.table({
            "id": ids,
            "v": [None if v is None else {"value": v.value(), "metadata": v.metadata()} for v in vs],
            "vec": [[float(i), commit + 0.5, -1.0] for i in ids],
            "iv": [[i, commit] for i in ids],
        }, schema=schema)

    blob = pa.schema([("id", pa.int64()), ("b", pa.large_binary())])
    catalog.create_table("db.blob", Schema.from_pyarrow_schema(blob, options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true"}), False)
    blobs = [pa.table({"id": [0, 1, 2], "b": [b"x" * 100_000, None, b""]}, schema=blob),
             pa.table({"id": [3, 4], "b": [bytes(range(256)), b"last"]}, schema=blob)]
    for data in blobs:
        _commit(catalog.get_table("db.blob"), data)
    _write_ipc(pa.concat_tables(blobs), f"{args['out']}/blob.arrow")
    shredding = json.dumps({"type": "ROW", "fields": [{"id": 0, "name": "v", "type": {
        "type": "ROW", "fields": [{"id": 0, "name": "age", "type": "BIGINT"}]}}]})
    specs = {
        "app": (None, {}, [[0, 1, 2, 3], [4, 5], [2, 6, 7]]),
        "pk": (["id"], {"bucket": "2"}, [[0, 1, 2, 3], [4, 5, 1], [2, 6, 7, 0]]),
        "shredded": (None, {"variant.shreddingSchema": shredding}, [[0, 2, 3]]),
    }
    for name, (pk, options, commits) in specs.items():
        catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(schema, primary_keys=pk, options=options),
                             False)
        table = catalog.get_table(f"db.{name}")
        batches = [batch(ids, n) for n, ids in enumerate(commits)]
        for data in batches:
            _commit(table, data)
        _write_ipc(pa.concat_tables(batches), f"{args['out']}/{name}.arrow")
    return {"tables": ["db.blob", *(f"db.{name}" for name in specs)]}


def cmd_blob_table(args: dict[str, Any]) -> dict[str, Any]:
    """``db.blob`` in ``warehouse``: a data-evolution table with a BLOB column ``b`` in three commits (two appends,
    then an update of column ``x`` by row id); its rows as pypaimon reads them go to ``out`` (IPC, ``_ROW_ID``
    order)."""
    catalog = _catalog(args["warehouse"])
    catalog.create_database("db", True)
    schema = pa.schema([("id", pa.int64()), ("x", pa.string()), ("b", pa.large_binary())])
    table = _feature_table(catalog, "db.blob", schema, {"row-tracking.enabled": "true",
                                                         "data-evolution.enabled": "true"}, [
        pa.table({"id": [0, 1, 2], "x": ["a", "b", "c"], "b": [b"x" * 100_000, None, b""]}, schema=schema),
        pa.table({"id": [3, 4], "x": ["d", "e"], "b": [bytes(range(256)), b"last"]}, schema=schema)])
    builder = table.new_batch_write_builder()
    commit = builder.new_commit()
    try:
        commit.commit(builder.new_update().with_update_type(["x"]).update_by_arrow_with_row_id(
            pa.table({"_ROW_ID": pa.array([1, 3], pa.int64()), "x": pa.array(["B", "D"], pa.string())})))
    finally:
        commit.close()
    result = _scan(catalog.get_table("db.blob"))
    _write_ipc(result, args["out"])
    return {"rows": result.num_rows}


def cmd_read_blob_files(args: dict[str, Any]) -> dict[str, Any]:
    """pypaimon's ``FormatBlobReader`` over ``.blob`` files (``files``, read with the file IO of table ``table``):
    the values of each to ``<file>.arrow`` as one ``large_binary`` column ``b``."""
    from pypaimon.read.reader.format_blob_reader import FormatBlobReader
    from pypaimon.schema.data_types import AtomicType, DataField

    file_io = _catalog(args["warehouse"]).get_table(args["table"]).file_io
    field = DataField(0, "b", AtomicType("BLOB"))
    counts = []
    for path in args["files"]:
        reader = FormatBlobReader(file_io, path, ["b"], [field], None, False)
        batches = []
        while True:
            batch = reader.read_arrow_batch()
            if batch is None:
                break
            batches.append(batch)
        reader.close()
        values = pa.concat_arrays([b.column(0).cast(pa.large_binary()) for b in batches]) if batches else \
            pa.array([], pa.large_binary())
        _write_ipc(pa.table({"b": values}), path + ".arrow")
        counts.append(len(values))
    return {"rows": counts}


def cmd_de_sequence(args: dict[str, Any]) -> dict[str, Any]:
    """Data evolution: one sequence of operations on the existing table ``table`` of ``warehouse``, each as in
    ``data_evolution`` (one commit each), where ``{"op": "read"}`` reads the table (rows with ``_ROW_ID``, sorted by
    it). Returns ``{"reads": [rows, ...]}`` as JSON rows (for small tables: no files)."""
    catalog = _catalog(args["warehouse"])
    name = args["table"]
    reads = []
    for op in args["ops"]:
        if op["op"] != "read":
            _de_op(catalog, name, op)
            continue
        table = catalog.get_table(name)
        builder = table.new_read_builder().with_projection(["_ROW_ID", *table.field_names])
        rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
        reads.append(sorted(rows, key=lambda r: r["_ROW_ID"]))
    return {"reads": reads}


# ------------------------------------------------------------------------------------------------- global index


def _gi_lookup(table: Any, column: str, values: list[Any]) -> dict[str, Any]:
    """pypaimon's read of ``table`` filtered by ``column`` = value (IN for several values), and the row ranges its
    global index evaluation picks (``indexed``: the ranges the index matched, ``unindexed``: ranges it does not
    cover; None: the index was not used). Search mode ``full``: rows the index does not cover are read too (the
    default ``fast`` skips them)."""
    table = table.copy({"scalar-index.search-mode": "full"})
    builder = table.new_read_builder()
    pb = builder.new_predicate_builder()
    pred = pb.equal(column, values[0]) if len(values) == 1 else pb.is_in(column, values)
    builder = builder.with_filter(pred).with_projection(["_ROW_ID", *table.field_names])
    scan = builder.new_scan()
    splits = scan.plan().splits()
    rows = builder.new_read().to_arrow(splits)
    fs = scan.file_scanner
    plan = fs._eval_global_index(table.snapshot_manager().get_latest_snapshot())
    ranges: dict[str, Any] = {"indexed": None, "unindexed": None}
    if plan is not None:
        ranges = {"indexed": [[r.from_, r.to] for r in plan.indexed_result.results().to_range_list()],
                  "unindexed": [[r.from_, r.to] for r in plan.unindexed_ranges]}
    return {"rows": rows.to_pylist(), **ranges}


def cmd_global_index(args: dict[str, Any]) -> dict[str, Any]:
    """Data-evolution tables with a global index over row ids: ``tables`` as for ``data_evolution``, whose ops may
    also be ``{"op": "create_index", "column": c, "type": "btree", "options": {...}}`` (pypaimon's
    ``create_global_index``: indexes the row ranges not yet covered). ``names``: tables to read only.
    ``lookups``: ``{table: [[column, [values]], ...]}``: filtered reads (see :func:`_gi_lookup`). Returns per table
    the row count, the IPC file of every row (with ``_ROW_ID``) at ``<out_dir>/<name>.arrow``, the index files
    (name, type, row range, field id) and the lookups' results."""
    catalog = _catalog(args["warehouse"])
    catalog.create_database("db", True)
    names = []
    for spec in args.get("tables", []):
        name = spec["name"]
        schema = pa.schema([(n, getattr(pa, t)()) for n, t in spec["fields"]])
        options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", **spec.get("options", {})}
        if spec.get("create", True):
            catalog.create_table(name, Schema.from_pyarrow_schema(
                schema, partition_keys=spec.get("partition_keys"), options=options), False)
        for op in spec["ops"]:
            if op["op"] == "create_index":
                catalog.get_table(name).create_global_index(op["column"], op.get("type", "btree"),
                                                            options=op.get("options"))
            else:
                _de_op(catalog, name, op)
        names.append(name)
    out: dict[str, Any] = {}
    for name in names + list(args.get("names", [])):
        from pypaimon.index.index_file_handler import IndexFileHandler

        table = catalog.get_table(name)
        builder = table.new_read_builder().with_projection(["_ROW_ID", *table.field_names])
        result = builder.new_read().to_arrow(builder.new_scan().plan().splits())
        path = f"{args['out_dir']}/{name}.arrow"
        _write_ipc(result, path)
        snapshot = table.snapshot_manager().get_latest_snapshot()
        entries = IndexFileHandler(table=table).scan(
            snapshot, lambda e: e.index_file.global_index_meta is not None) if snapshot is not None else []
        index = sorted([e.index_file.file_name, e.index_file.index_type, e.index_file.global_index_meta.row_range_start,
                        e.index_file.global_index_meta.row_range_end, e.index_file.global_index_meta.index_field_id]
                       for e in entries)
        lookups = [_gi_lookup(table, column, values) for column, values in args.get("lookups", {}).get(name, [])]
        out[name] = {"rows": result.num_rows, "out": path, "index": index, "lookups": lookups}
    return out


def cmd_blob_write_tables(args: dict[str, Any]) -> dict[str, Any]:
    """BLOB tables for the engine's BLOB writes (issue 23), in ``warehouse``: ``db.blob`` of :func:`cmd_blob_table`
    (its rows to ``<out>/blob.arrow``) and ``db.blob_rolled``, a BLOB column ``b`` written with
    ``blob.target-file-size`` = 64 kb in two commits of 40 kB values, so that pypaimon rolls ``.blob`` files (its
    rows to ``<out>/blob_rolled.arrow``), and ``db.blob_updated``: its first commit, then an update of the BLOB
    column by row id (pypaimon writes a delta ``.blob`` file with placeholders)."""
    cmd_blob_table({"warehouse": args["warehouse"], "out": f"{args['out']}/blob.arrow"})
    catalog = _catalog(args["warehouse"])
    schema = pa.schema([("id", pa.int64()), ("b", pa.large_binary())])
    batches = [pa.table({"id": list(range(k, k + 5)),
                         "b": [None if i == 2 else bytes([i]) * 40_000 for i in range(k, k + 5)]}, schema=schema)
               for k in (0, 5)]
    _feature_table(catalog, "db.blob_rolled", schema, {"row-tracking.enabled": "true",
                                                       "data-evolution.enabled": "true",
                                                       "blob.target-file-size": "64 kb"}, batches)
    _write_ipc(_scan(catalog.get_table("db.blob_rolled")), f"{args['out']}/blob_rolled.arrow")
    updated = _feature_table(catalog, "db.blob_updated", schema, {"row-tracking.enabled": "true",
                                                                  "data-evolution.enabled": "true"}, batches[:1])
    builder = updated.new_batch_write_builder()
    commit = builder.new_commit()
    try:
        commit.commit(builder.new_update().with_update_type(["b"]).update_by_arrow_with_row_id(
            pa.table({"_ROW_ID": pa.array([1, 3], pa.int64()), "b": pa.array([b"new1", b"new3"], pa.large_binary())})))
    finally:
        commit.close()
    return {"tables": ["db.blob", "db.blob_rolled", "db.blob_updated"]}


COMMANDS = {
    "read": cmd_read,
    "write": cmd_write,
    "schema": cmd_schema,
    "snapshots": cmd_snapshots,
    "bench": cmd_bench,
    "gate_tables": cmd_gate_tables,
    "data_evolution": cmd_data_evolution,
    "data_evolution_bench": cmd_data_evolution_bench,
    "rt_append": cmd_rt_append,
    "rt_read": cmd_rt_read,
    "new_type_tables": cmd_new_type_tables,
    "read_blob_files": cmd_read_blob_files,
    "blob_table": cmd_blob_table,
    "de_sequence": cmd_de_sequence,
    "global_index": cmd_global_index,
    "blob_write_tables": cmd_blob_write_tables,
}


# ------------------------------------------------------------------------------------------------------------- cli


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    read = sub.add_parser("read")
    read.add_argument("--warehouse", required=True)
    read.add_argument("--table", required=True)
    read.add_argument("--snapshot", type=int)
    read.add_argument("--tag")
    read.add_argument("--out", required=True)
    write = sub.add_parser("write")
    write.add_argument("--warehouse", required=True)
    write.add_argument("--spec", required=True)
    schema = sub.add_parser("schema")
    schema.add_argument("--warehouse", required=True)
    schema.add_argument("--table", required=True)
    schema.add_argument("--out")
    snapshots = sub.add_parser("snapshots")
    snapshots.add_argument("--warehouse", required=True)
    snapshots.add_argument("--table", required=True)
    bench = sub.add_parser("bench")
    bench.add_argument("--spec", required=True)
    return parser


def _run_one(command: dict[str, Any]) -> dict[str, Any]:
    name = command.get("command")
    if name not in COMMANDS:
        raise ValueError(f"unknown command {name!r}; expected one of {sorted(COMMANDS)}")
    return COMMANDS[name](command)


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-", "--json"):
        text = sys.stdin.read() if argv[0] == "-" else argv[1]
        payload = json.loads(text)
    else:
        parsed = _parser().parse_args(argv)
        if parsed.command is None:
            _parser().print_help()
            return 2
        payload = {k: v for k, v in vars(parsed).items() if v is not None}
    try:
        if isinstance(payload, list):
            result: Any = [_run_one(command) for command in payload]
        else:
            result = _run_one(payload)
    except Exception:
        traceback.print_exc()
        return 1
    sys.stdout.write(RESULT_PREFIX + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
