"""Shared machinery of the pypaimon interop suite.

* ``PypaimonClient`` / the session fixture ``pypaimon``: reads and writes tables with pypaimon 2.1.0, which lives in
  its own virtualenv (``pypaimon_env.py``) and is driven through ``pypaimon_driver.py`` in a subprocess. Data moves
  as Arrow IPC files, so types survive exactly.
* ``CASES``: the table variants both directions exercise (fixed buckets 4/1, dynamic buckets, partitioned or not,
  append tables) and a deterministic (numpy, seeded) generator of their commits.
* ``Model``: the expected table contents, a plain ``key -> row`` dict replayed batch by batch (``+I``/``+U`` upsert,
  ``-U``/``-D`` delete, last occurrence wins inside a batch -- Paimon's deduplicate merge engine).
* ``assert_same_rows``: compares two Arrow tables sorted by key after casting to one schema (pypaimon's read schema).

Type normalisation done by ``assert_same_rows`` (the only one needed): field *nullability* and field metadata are
ignored -- pypaimon reports primary-key columns as ``not null`` while an expected table may not. Arrow *types* are
compared strictly by the ``test_*_read_schema`` tests instead, so a type mismatch is reported there and does not
hide value comparisons. Time zones: TIMESTAMP_LTZ columns are written as ``timestamp[unit, tz=UTC]``, which is what
pypaimon reads back.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pytest

from tests.interop.paimon_java import PaimonJavaClient, compile_driver
from tests.interop.paimon_java_env import find_bridge_jar
from tests.interop.pypaimon_env import ensure_pypaimon_python

DRIVER = Path(__file__).resolve().parent / "pypaimon_driver.py"
RESULT_PREFIX = "@@RESULT@@ "
DATABASE = "interop"

# ------------------------------------------------------------------------------------------------- pypaimon client


class PypaimonError(RuntimeError):
    """The pypaimon driver subprocess failed."""


def write_ipc(table: pa.Table, path: Path) -> Path:
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return path


def read_ipc(path: Path) -> pa.Table:
    with pa.memory_map(str(path), "r") as source:
        return ipc.open_file(source).read_all()


class PypaimonClient:
    """Runs ``pypaimon_driver.py`` with the pypaimon venv's interpreter."""

    def __init__(self, python: str, work_dir: Path, timeout: float = 900.0) -> None:
        self.python = python
        self.work_dir = work_dir
        self.timeout = timeout
        work_dir.mkdir(parents=True, exist_ok=True)

    def _tmp(self, suffix: str) -> Path:
        return self.work_dir / f"{uuid.uuid4().hex}{suffix}"

    def run(self, payload: dict[str, Any] | list[dict[str, Any]]) -> Any:
        """Run one driver command (or a list of them in one process) and return its JSON result."""
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # the driver must not see the project's packages
        env["PYTHONNOUSERSITE"] = "1"
        proc = subprocess.run(
            [self.python, str(DRIVER), "-"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            env=env,
            cwd=str(self.work_dir),
            check=False,
        )
        results = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
        if proc.returncode != 0 or not results:
            raise PypaimonError(
                f"pypaimon driver failed (exit {proc.returncode}) for {json.dumps(payload)[:2000]}\n"
                f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-8000:]}"
            )
        return json.loads(results[-1][len(RESULT_PREFIX) :])

    def read(self, warehouse: str | Path, table: str, snapshot: int | None = None, tag: str | None = None,
             catalog_options: dict[str, str] | None = None) -> pa.Table:
        """Full merged scan of ``table`` (latest snapshot, or ``snapshot`` / ``tag``); ``catalog_options`` (e.g.
        pypaimon's ``fs.s3.*``) reach the driver through its stdin, never its argv."""
        version = {"snapshot": snapshot, "tag": tag, "catalog_options": catalog_options}
        return self.read_many(warehouse, table, [version])[0]

    def read_many(self, warehouse: str | Path, table: str, versions: Sequence[dict[str, Any]]) -> list[pa.Table]:
        """Several scans in one subprocess; each version is ``{"snapshot": N}``, ``{"tag": T}`` or ``{}``."""
        commands = []
        outs = []
        for version in versions:
            out = self._tmp(".arrow")
            outs.append(out)
            command: dict[str, Any] = {"command": "read", "warehouse": str(warehouse), "table": table, "out": str(out)}
            command.update({k: v for k, v in version.items() if v is not None})
            commands.append(command)
        self.run(commands)
        tables = [read_ipc(out) for out in outs]
        for out in outs:
            out.unlink()
        return tables

    def write(
        self,
        warehouse: str | Path,
        table: str,
        schema: pa.Schema,
        pks: Sequence[str],
        partitions: Sequence[str],
        options: dict[str, str],
        batches: Sequence[pa.Table],
        tags: dict[str, int] | None = None,
        create: bool = True,
        properties: Sequence[dict[str, str] | None] | None = None,
    ) -> list[int]:
        """Create ``table`` (unless ``create=False``) and commit each batch separately; returns the snapshot ids.

        ``tags`` maps a tag name to the 1-based commit number after which pypaimon creates it; ``properties``: the
        snapshot properties of each commit (or None).
        """
        schema_file = write_ipc(schema.empty_table(), self._tmp(".schema.arrow"))
        batch_files = [write_ipc(batch, self._tmp(f".batch{i}.arrow")) for i, batch in enumerate(batches)]
        spec = {
            "table": table,
            "schema": str(schema_file),
            "primary_keys": list(pks),
            "partition_keys": list(partitions),
            "options": dict(options),
            "batches": [str(p) for p in batch_files],
            "tags": dict(tags or {}),
            "create": create,
            "properties": list(properties or []),
        }
        try:
            result = self.run({"command": "write", "warehouse": str(warehouse), "spec_data": spec})
        finally:
            for path in [schema_file, *batch_files]:
                path.unlink(missing_ok=True)
        return [int(s) for s in result["snapshot_ids"]]

    def schema(self, warehouse: str | Path, table: str) -> tuple[dict[str, Any], pa.Schema]:
        """pypaimon's view of the table schema (JSON) and its Arrow read schema."""
        out = self._tmp(".schema.arrow")
        info = self.run({"command": "schema", "warehouse": str(warehouse), "table": table, "out": str(out)})
        arrow_schema = read_ipc(out).schema
        out.unlink()
        return info, arrow_schema

    def snapshots(self, warehouse: str | Path, table: str) -> dict[str, Any]:
        result: dict[str, Any] = self.run({"command": "snapshots", "warehouse": str(warehouse), "table": table})
        return result


@pytest.fixture(scope="session")
def pypaimon(tmp_path_factory: pytest.TempPathFactory) -> PypaimonClient:
    """Client for pypaimon 2.1.0 in ``<repo>/.venv-pypaimon`` (created on first use, or ``$PYPAIMON_PYTHON``)."""
    return PypaimonClient(ensure_pypaimon_python(), tmp_path_factory.mktemp("pypaimon-io"))


@pytest.fixture(scope="session")
def paimon_java(tmp_path_factory: pytest.TempPathFactory) -> PaimonJavaClient:
    """Client for Paimon Java 1.0 (jar of ``<repo>/.venv-paimon-java`` or ``$PAIMON_JAVA_PYTHON``); compiles once."""
    jar = find_bridge_jar()
    classes = compile_driver(jar, tmp_path_factory.mktemp("paimon-java-classes"))
    return PaimonJavaClient(jar, classes, tmp_path_factory.mktemp("paimon-java-io"))


# ------------------------------------------------------------------------------------------------ data generation

# A value-column set covering the required types; every value column is nullable and gets ~10% nulls.
VALUE_FIELDS: list[pa.Field] = [
    pa.field("b", pa.bool_()),
    pa.field("i8", pa.int8()),
    pa.field("i16", pa.int16()),
    pa.field("i32", pa.int32()),
    pa.field("i64", pa.int64()),
    pa.field("f32", pa.float32()),
    pa.field("f64", pa.float64()),
    pa.field("dec10", pa.decimal128(10, 2)),
    pa.field("dec38", pa.decimal128(38, 6)),
    pa.field("d", pa.date32()),
    pa.field("ts3", pa.timestamp("ms")),
    pa.field("ts6", pa.timestamp("us")),
    pa.field("ltz3", pa.timestamp("ms", tz="UTC")),
    pa.field("ltz6", pa.timestamp("us", tz="UTC")),
    pa.field("bin", pa.binary()),
    pa.field("s", pa.string()),
]

PARTITIONS = ["2024-01-01", "2024-01-02", "2024-02-29"]
_ALPHABET = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.") + ["é", "ß", "日", "本", "🙂"]
NULL_FRACTION = 0.1
ROWKIND_FIELD = "rk"


def _seed(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def _random_strings(rng: np.random.Generator, n: int, max_len: int) -> list[str]:
    lengths = rng.integers(0, max_len + 1, n)
    picks = rng.integers(0, len(_ALPHABET), int(lengths.sum()))
    out = []
    pos = 0
    for length in lengths:
        out.append("".join(_ALPHABET[i] for i in picks[pos : pos + length]))
        pos += int(length)
    return out


def _decimals(unscaled: Sequence[int], scale: int) -> list[Decimal]:
    return [Decimal(f"{int(u)}E-{scale}") for u in unscaled]


def random_column(data_type: pa.DataType, n: int, rng: np.random.Generator) -> pa.Array:
    """``n`` random non-null values of ``data_type`` (deterministic for a given ``rng`` state)."""
    if pa.types.is_boolean(data_type):
        return pa.array(rng.integers(0, 2, n).astype(bool))
    if pa.types.is_integer(data_type):
        info = np.iinfo(data_type.to_pandas_dtype())
        return pa.array(rng.integers(info.min, info.max, n, endpoint=True, dtype=info.dtype), type=data_type)
    if pa.types.is_float32(data_type):
        return pa.array((rng.standard_normal(n) * 1e3).astype(np.float32), type=data_type)
    if pa.types.is_float64(data_type):
        return pa.array(rng.standard_normal(n) * 1e6, type=data_type)
    if pa.types.is_decimal(data_type):
        bound = 10 ** min(data_type.precision, 18) - 1
        unscaled = [int(v) for v in rng.integers(-bound, bound, n, endpoint=True)]
        if data_type.precision > 18:  # use the full precision: ~half the values wider than 64 bits
            high = rng.integers(-(10**18) + 1, 10**18, n)
            wide = rng.random(n) < 0.5
            digits = 10 ** (data_type.precision - 18)
            unscaled = [int(h) * digits + abs(u) % digits if w else u for h, u, w in zip(high, unscaled, wide)]
        return pa.array(_decimals(unscaled, data_type.scale), type=data_type)
    if pa.types.is_date32(data_type):  # 1901-08 .. 2106-11, incl. days before the epoch
        return pa.array(rng.integers(-25_000, 50_000, n).astype(np.int32)).cast(pa.date32())
    if pa.types.is_timestamp(data_type):  # 1900 .. 2100, incl. instants before the epoch
        per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[data_type.unit]
        seconds = rng.integers(-2_208_988_800, 4_102_444_800, n)
        fraction = rng.integers(0, per_second, n)
        return pa.array(seconds * per_second + fraction, type=pa.int64()).cast(data_type)
    if pa.types.is_string(data_type):
        return pa.array(_random_strings(rng, n, 40), type=data_type)
    if pa.types.is_binary(data_type):
        lengths = rng.integers(0, 33, n)
        return pa.array([rng.bytes(int(length)) for length in lengths], type=data_type)
    raise TypeError(f"no generator for {data_type}")


def with_nulls(array: pa.Array, rng: np.random.Generator, fraction: float = NULL_FRACTION) -> pa.Array:
    mask = pa.array(rng.random(len(array)) < fraction)
    return pc.if_else(mask, pa.scalar(None, type=array.type), array)


def _key_id(k: np.ndarray) -> dict[str, pa.Array]:
    return {"id": pa.array(k, type=pa.int64())}


def _key_dt_id(k: np.ndarray) -> dict[str, pa.Array]:
    return {"dt": pa.array([PARTITIONS[int(v) % len(PARTITIONS)] for v in k]), "id": pa.array(k, type=pa.int64())}


def _key_dt_hr_id(k: np.ndarray) -> dict[str, pa.Array]:
    return {
        "dt": pa.array([PARTITIONS[int(v) % 2] for v in k]),
        "hr": pa.array((k // 2) % 3, type=pa.int32()),
        "id": pa.array(k, type=pa.int64()),
    }


def _key_name_n(k: np.ndarray) -> dict[str, pa.Array]:
    # Short (<= 7 bytes: inline in BinaryRow) and long (var-length part) strings, some multi-byte UTF-8.
    names = [f"{int(v):x}" if v % 3 == 0 else f"customer-{int(v):06d}-ñ" if v % 3 == 1 else f"k{int(v)}" for v in k]
    return {"name": pa.array(names), "n": pa.array(k % 7, type=pa.int32())}


@dataclass(frozen=True)
class Case:
    """One table variant: schema, keys, options and how its key columns derive from an integer key ``k``."""

    name: str
    key_fields: list[pa.Field]
    key_columns: Callable[[np.ndarray], dict[str, pa.Array]]
    primary_keys: list[str]
    partition_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    rowkind_field: bool = False  # adds a STRING column ``rk`` + option ``rowkind.field=rk``

    @property
    def identifier(self) -> str:
        return f"{DATABASE}.{self.name}"

    @property
    def is_pk(self) -> bool:
        return bool(self.primary_keys)

    @property
    def schema(self) -> pa.Schema:
        fields = list(self.key_fields) + list(VALUE_FIELDS)
        if not self.is_pk:
            fields.append(pa.field("seq", pa.int64()))  # unique row number: append tables sort by it
        if self.rowkind_field:
            fields.append(pa.field(ROWKIND_FIELD, pa.string()))
        return pa.schema(fields)

    @property
    def table_options(self) -> dict[str, str]:
        options = dict(self.options)
        if self.rowkind_field:
            options["rowkind.field"] = ROWKIND_FIELD
        return options

    @property
    def sort_keys(self) -> list[str]:
        return list(self.primary_keys) if self.is_pk else ["seq"]


CASES: list[Case] = [
    # fixed bucket=4, unpartitioned; deletes through the engine's row_kinds=[...]
    Case("pk_bucket4", [pa.field("id", pa.int64(), nullable=False)], _key_id, ["id"], options={"bucket": "4"}),
    # fixed bucket=4, partitioned, deletes through rowkind.field
    Case(
        "pk_bucket4_part_rowkind",
        [pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False)],
        _key_dt_id,
        ["dt", "id"],
        ["dt"],
        {"bucket": "4"},
        rowkind_field=True,
    ),
    # fixed bucket=1, unpartitioned, rowkind.field
    Case(
        "pk_bucket1_rowkind",
        [pa.field("id", pa.int64(), nullable=False)],
        _key_id,
        ["id"],
        options={"bucket": "1"},
        rowkind_field=True,
    ),
    # fixed bucket=1, two partition levels (STRING, INT)
    Case(
        "pk_bucket1_part2",
        [
            pa.field("dt", pa.string(), nullable=False),
            pa.field("hr", pa.int32(), nullable=False),
            pa.field("id", pa.int64(), nullable=False),
        ],
        _key_dt_hr_id,
        ["dt", "hr", "id"],
        ["dt", "hr"],
        {"bucket": "1"},
    ),
    # composite STRING+INT key, bucket=4: bucket hashing of inline and var-length strings
    Case(
        "pk_bucket4_string_key",
        [pa.field("name", pa.string(), nullable=False), pa.field("n", pa.int32(), nullable=False)],
        _key_name_n,
        ["name", "n"],
        options={"bucket": "4"},
    ),
    # dynamic bucket by default (no bucket option), unpartitioned
    Case("pk_dynamic_default", [pa.field("id", pa.int64(), nullable=False)], _key_id, ["id"]),
    # dynamic bucket (bucket=-1) partitioned, small target so several buckets per partition, rowkind.field
    Case(
        "pk_dynamic_part_rowkind",
        [pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False)],
        _key_dt_id,
        ["dt", "id"],
        ["dt"],
        {"bucket": "-1", "dynamic-bucket.target-row-num": "300"},
        rowkind_field=True,
    ),
    # append tables (bucket-unaware: bucket=-1 is the default)
    Case("append", [pa.field("id", pa.int64())], _key_id, []),
    Case(
        "append_part",
        [pa.field("dt", pa.string()), pa.field("id", pa.int64())],
        _key_dt_id,
        [],
        ["dt"],
        {"metadata.stats-mode": "full"},
    ),
]
PK_CASES = [c for c in CASES if c.is_pk]
CASE_IDS = [c.name for c in CASES]


@dataclass
class Batch:
    """One commit: the rows and their row kinds (``rk`` column already filled for rowkind.field tables)."""

    data: pa.Table
    kinds: list[str]

    @property
    def has_retractions(self) -> bool:
        return any(kind in ("-U", "-D") for kind in self.kinds)


def _key_plan(rng: np.random.Generator, deletes: bool) -> list[list[tuple[int, str]]]:
    """Commits of (k, row kind): inserts, upserts (half existing, half new), deletes, re-inserts, duplicates."""
    n1 = 2400
    live: set[int] = set()
    plan: list[list[tuple[int, str]]] = []
    next_key = 0

    def fresh(count: int) -> list[int]:
        nonlocal next_key
        keys = list(range(next_key, next_key + count))
        next_key += count
        return keys

    def existing(count: int, exclude: frozenset[int] | set[int] = frozenset()) -> list[int]:
        pool = sorted(live - exclude)
        return [int(v) for v in rng.choice(pool, size=min(count, len(pool)), replace=False)]

    def shuffled(rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
        order = rng.permutation(len(rows))
        return [rows[i] for i in order]

    def commit(rows: list[tuple[int, str]]) -> None:
        for k, kind in rows:
            if kind in ("+I", "+U"):
                live.add(k)
            else:
                live.discard(k)
        plan.append(rows)

    # 1: inserts
    commit(shuffled([(k, "+I") for k in fresh(n1)]))
    # 2: upsert 600 existing + 600 new
    commit(shuffled([(k, "+U") for k in existing(600)] + [(k, "+I") for k in fresh(600)]))
    # 3: deletes (incl. keys that never existed), updates, inserts
    if deletes:
        gone = existing(400)
        upd = existing(300, set(gone))
        rows = [(k, "-D") for k in gone] + [(k, "-D") for k in range(10**6, 10**6 + 30)]
        commit(shuffled(rows + [(k, "+U") for k in upd] + [(k, "+I") for k in fresh(100)]))
    else:
        commit(shuffled([(k, "+U") for k in existing(300)] + [(k, "+I") for k in fresh(100)]))
    # 4: re-insert deleted keys, -U retractions, updates, and keys occurring twice in the batch (last one wins)
    deleted = sorted(set(range(next_key)) - live)
    reinserted = [int(v) for v in rng.choice(deleted, size=min(150, len(deleted)), replace=False)] if deleted else []
    if deletes:
        retract = existing(100)
        upd = existing(200, set(retract))
        twice = existing(100, set(retract) | set(upd))
        rows = [(k, "+I") for k in reinserted] + [(k, "-U") for k in retract] + [(k, "+U") for k in upd]
        rows = shuffled(rows)
        rows += [(k, "+U") for k in twice[:50]] + [(k, "-D") for k in twice[50:]]
        rows += [(k, "-D") for k in twice[:50]] + [(k, "+I") for k in twice[50:]]
    else:
        upd = existing(200)
        twice = existing(50, set(upd))
        rows = shuffled([(k, "+U") for k in upd]) + [(k, "+I") for k in twice] + [(k, "+U") for k in twice]
    commit(rows)
    return plan


def make_batches(case: Case, deletes: bool, seed_tag: str = "") -> list[Batch]:
    """Deterministic commits for ``case``; ``deletes=False`` keeps to upserts (writers without row kinds)."""
    rng = np.random.default_rng(_seed(case.name, deletes, seed_tag))
    if case.is_pk:
        plan = _key_plan(rng, deletes)
    else:  # append tables: 3 commits of plain inserts
        sizes = ((0, 2000), (2000, 1500), (3500, 800))
        plan = [[(k, "+I") for k in range(start, start + size)] for start, size in sizes]
    batches = []
    seq = 0
    for rows in plan:
        keys = np.array([k for k, _ in rows], dtype=np.int64)
        kinds = [kind for _, kind in rows]
        n = len(rows)
        columns: dict[str, pa.Array] = dict(case.key_columns(keys))
        for value_field in VALUE_FIELDS:
            columns[value_field.name] = with_nulls(random_column(value_field.type, n, rng), rng)
        if not case.is_pk:
            columns["seq"] = pa.array(np.arange(seq, seq + n), type=pa.int64())
            seq += n
        if case.rowkind_field:
            columns[ROWKIND_FIELD] = pa.array(kinds, type=pa.string())
        data = pa.Table.from_arrays([columns[f.name] for f in case.schema], schema=case.schema)
        batches.append(Batch(data, kinds))
    return batches


# ------------------------------------------------------------------------------------------------- expected model


class Model:
    """Expected contents: ``key -> row`` after replaying each batch (deduplicate merge engine semantics)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.schema = case.schema
        self._batches: list[pa.Table] = []
        self._rows: dict[tuple[Any, ...], tuple[int, int]] = {}  # key -> (batch number, row index)
        self._append_rows: list[tuple[int, int]] = []

    def apply(self, batch: Batch, honour_kinds: bool = True) -> None:
        """Replay ``batch``; ``honour_kinds=False`` treats every row as an insert (writer saw no row kinds)."""
        number = len(self._batches)
        self._batches.append(batch.data)
        if not self.case.is_pk:
            self._append_rows.extend((number, i) for i in range(batch.data.num_rows))
            return
        keys = batch.data.select(self.case.primary_keys).to_pylist()
        for i, (key_row, kind) in enumerate(zip(keys, batch.kinds)):
            key = tuple(key_row.values())
            if not honour_kinds or kind in ("+I", "+U"):
                self._rows[key] = (number, i)
            else:
                self._rows.pop(key, None)

    def expected(self) -> pa.Table:
        positions = self._append_rows if not self.case.is_pk else list(self._rows.values())
        if not positions:
            return self.schema.empty_table()
        offsets = np.cumsum([0] + [b.num_rows for b in self._batches])
        indices = pa.array([int(offsets[b]) + i for b, i in positions], type=pa.int64())
        combined = pa.concat_tables(self._batches).combine_chunks()
        return combined.take(indices)

    def __len__(self) -> int:
        return len(self._append_rows) if not self.case.is_pk else len(self._rows)


# ------------------------------------------------------------------------------------------------------- comparing


def _normalise(table: pa.Table, schema: pa.Schema, sort_keys: Sequence[str]) -> pa.Table:
    table = table.select(schema.names).cast(schema)
    return table.sort_by([(k, "ascending") for k in sort_keys]).combine_chunks()


def _differences(actual: pa.Table, expected: pa.Table, sort_keys: Sequence[str], limit: int = 5) -> Iterator[str]:
    a_rows = {tuple(r[k] for k in sort_keys): r for r in actual.to_pylist()}
    e_rows = {tuple(r[k] for k in sort_keys): r for r in expected.to_pylist()}
    missing = [k for k in e_rows if k not in a_rows]
    extra = [k for k in a_rows if k not in e_rows]
    if missing:
        yield f"{len(missing)} expected keys missing, e.g. {missing[:limit]}"
    if extra:
        yield f"{len(extra)} unexpected keys, e.g. {extra[:limit]}"
    shown = 0
    for key, e_row in e_rows.items():
        a_row = a_rows.get(key)
        if a_row is not None and a_row != e_row:
            diff = {c: (a_row[c], e_row[c]) for c in e_row if a_row[c] != e_row[c]}
            yield f"key {key}: (actual, expected) {diff}"
            shown += 1
            if shown >= limit:
                break


def assert_same_rows(actual: pa.Table, expected: pa.Table, sort_keys: Sequence[str], schema: pa.Schema) -> None:
    """Assert equal rows after casting both to ``schema`` (pypaimon's read schema) and sorting by ``sort_keys``."""
    assert actual.column_names == schema.names, f"columns {actual.column_names} != {schema.names}"
    a = _normalise(actual, schema, sort_keys)
    e = _normalise(expected, schema, sort_keys)
    if a.num_rows == e.num_rows and a.equals(e):
        return
    details = "\n  ".join(_differences(a, e, sort_keys))
    raise AssertionError(f"row mismatch: actual {a.num_rows} rows, expected {e.num_rows} rows\n  {details}")


def assert_snapshots_read_as_expected(pypaimon: PypaimonClient, warehouse: Path, case: Case, table: Any,
                                      expected: dict[int, pa.Table]) -> None:
    """pypaimon (one process for all of them) and the engine's ``table`` read each snapshot of ``expected``
    (snapshot id -> the model's rows) as the model says."""
    _, read_schema = pypaimon.schema(warehouse, case.identifier)
    sids = sorted(expected)
    results = pypaimon.read_many(warehouse, case.identifier, [{"snapshot": sid} for sid in sids])
    for sid, result in zip(sids, results, strict=True):
        assert_same_rows(result, expected[sid], case.sort_keys, read_schema)
        assert_same_rows(table.read(snapshot_id=sid), expected[sid], case.sort_keys, read_schema)


def assert_same_types(actual: pa.Schema, expected: pa.Schema) -> None:
    """Strict Arrow type equality per column (nullability and metadata ignored)."""
    assert actual.names == expected.names
    mismatched = {
        f.name: (str(f.type), str(expected.field(f.name).type)) for f in actual if f.type != expected.field(f.name).type
    }
    assert not mismatched, f"(actual, expected) types differ: {mismatched}"
