"""Cases shared by the Java golden-bytes harness (``java_golden/``) and the byte-level tests.

Each index case is (name, index type, type name, options, values); values are Python values in the engine's domain
(timestamps as epoch micros, decimals as unscaled ints, floats as Python floats). :func:`java_input` renders the
lines ``Golden.java`` reads; :func:`arrow_column` builds the Arrow column the Python writer indexes.
"""

from __future__ import annotations

import decimal
import random
import struct
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from table_engine.types import DataType, parse_type

TYPES: dict[str, str] = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT", "BIGINT": "BIGINT",
    "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "STRING": "STRING", "BYTES": "BYTES", "DATE": "DATE", "TIME": "TIME(0)",
    "TIMESTAMP3": "TIMESTAMP(3)", "TIMESTAMP6": "TIMESTAMP(6)", "TIMESTAMP_LTZ3": "TIMESTAMP(3) WITH LOCAL TIME ZONE",
    "DECIMAL10_2": "DECIMAL(10, 2)",
}

Case = tuple[str, str, str, dict[str, str], list[Any]]


def data_type(name: str) -> DataType:
    return parse_type(TYPES[name])


def _rng(seed: int) -> random.Random:
    return random.Random(seed)


def _ints(seed: int, n: int, lo: int, hi: int, null_rate: float = 0.1) -> list[Any]:
    r = _rng(seed)
    return [None if r.random() < null_rate else r.randint(lo, hi) for _ in range(n)]


def _strings(seed: int, n: int, distinct: int) -> list[Any]:
    r = _rng(seed)
    pool = ["", "a", "paimon", "héllo wörld ✓", "x" * 40, "日本語のテキスト" * 3] + [
        "".join(r.choice("abcdefghij") for _ in range(r.randint(1, 12))) for _ in range(distinct)]
    return [None if r.random() < 0.05 else r.choice(pool) for _ in range(n)]


def index_cases() -> list[Case]:
    cases: list[Case] = []
    # ---- bloom filter
    cases.append(("bloom_int", "bloom-filter", "INT", {"items": "100"}, _ints(1, 200, -1000, 1000)))
    cases.append(("bloom_bigint", "bloom-filter", "BIGINT", {"items": "1000", "fpp": "0.01"},
                  _ints(2, 500, -(2**62), 2**62)))
    cases.append(("bloom_string", "bloom-filter", "STRING", {"items": "50"}, _strings(3, 120, 40)))
    cases.append(("bloom_double", "bloom-filter", "DOUBLE", {"items": "20"},
                  [0.0, -0.0, float("nan"), float("inf"), -1.5, 3.25, None, 1e300]))
    cases.append(("bloom_float", "bloom-filter", "FLOAT", {"items": "20"}, [0.0, -0.0, float("nan"), 1.5, -2.25, None]))
    cases.append(("bloom_tinyint", "bloom-filter", "TINYINT", {"items": "30"}, [-128, -1, 0, 1, 127, None]))
    cases.append(("bloom_smallint", "bloom-filter", "SMALLINT", {"items": "30"}, [-32768, -1, 0, 32767, None]))
    cases.append(("bloom_date", "bloom-filter", "DATE", {"items": "30"}, [-1, 0, 19000, 20000, None]))
    cases.append(("bloom_time", "bloom-filter", "TIME", {"items": "30"}, [0, 1000, 86_399_000, None]))
    cases.append(("bloom_ts3", "bloom-filter", "TIMESTAMP3", {"items": "30"},
                  [0, 1_700_000_000_123_000, -5_000, None]))
    cases.append(("bloom_ts6", "bloom-filter", "TIMESTAMP6", {"items": "30"},
                  [0, 1_700_000_000_123_456, -5_001, None]))
    cases.append(("bloom_bytes", "bloom-filter", "BYTES", {"items": "30"},
                  [b"", b"\x00\xff", bytes(range(70)), None]))
    cases.append(("bloom_fpp_small", "bloom-filter", "INT", {"items": "7", "fpp": "0.0001"}, [1, 2, 3]))
    # ---- bitmap (both versions)
    for v in ("1", "2"):
        cases.append((f"bitmap{v}_int", "bitmap", "INT", {"version": v}, _ints(10, 300, -20, 20, 0.2)))
        cases.append((f"bitmap{v}_int_one_null", "bitmap", "INT", {"version": v}, [5, None, 5, 6, 7, 7]))
        cases.append((f"bitmap{v}_int_no_null", "bitmap", "INT", {"version": v}, [3, 1, 2, 3, 1, 9]))
        cases.append((f"bitmap{v}_string", "bitmap", "STRING", {"version": v}, _strings(11, 400, 60)))
        cases.append((f"bitmap{v}_bigint", "bitmap", "BIGINT", {"version": v},
                      _ints(12, 200, -(2**40), 2**40, 0.1) + [2**63 - 1, -(2**63)]))
        cases.append((f"bitmap{v}_boolean", "bitmap", "BOOLEAN", {"version": v}, [True, False, None, True, True]))
        cases.append((f"bitmap{v}_double", "bitmap", "DOUBLE", {"version": v},
                      [0.0, -0.0, float("nan"), 1.5, 1.5, -3.0, None, float("nan")]))
        cases.append((f"bitmap{v}_float", "bitmap", "FLOAT", {"version": v}, [0.0, -0.0, 2.5, 2.5, None, None]))
        cases.append((f"bitmap{v}_tinyint", "bitmap", "TINYINT", {"version": v}, [-128, 127, 0, 0, None]))
        cases.append((f"bitmap{v}_smallint", "bitmap", "SMALLINT", {"version": v}, [-300, 300, 300, None]))
        cases.append((f"bitmap{v}_date", "bitmap", "DATE", {"version": v}, _ints(13, 100, 18000, 18010, 0.1)))
        cases.append((f"bitmap{v}_ts3", "bitmap", "TIMESTAMP3", {"version": v},
                      [1_000_000, 2_000_000, 1_000_000, None, -3_000]))
        cases.append((f"bitmap{v}_ts6", "bitmap", "TIMESTAMP6", {"version": v}, [1, 2, 1, None, -3]))
        cases.append((f"bitmap{v}_many", "bitmap", "INT", {"version": v}, _ints(14, 5000, 0, 3000, 0.01)))
        cases.append((f"bitmap{v}_runs", "bitmap", "INT", {"version": v}, [i // 1000 for i in range(20000)]))
        cases.append((f"bitmap{v}_all_null", "bitmap", "INT", {"version": v}, [None, None, None]))
    cases.append(("bitmap2_small_blocks", "bitmap", "STRING", {"index-block-size": "160 b"}, _strings(15, 300, 80)))
    # keys colliding in one HashMap bin: Java turns the bin into a red-black tree (order not modelled)
    cases.append(("bitmap2_treeify", "bitmap", "INT", {}, [i * 16 for i in range(40)] * 2))
    cases.append(("bitmap2_blocks_int", "bitmap", "INT", {"index-block-size": "100b"}, _ints(16, 500, 0, 400, 0)))
    # ---- bsi
    cases.append(("bsi_int", "bsi", "INT", {}, _ints(20, 300, -500, 500, 0.1)))
    cases.append(("bsi_bigint", "bsi", "BIGINT", {}, _ints(21, 300, -(2**62), 2**62, 0.1) + [2**63 - 1]))
    cases.append(("bsi_positive", "bsi", "INT", {}, [5, 3, 9, 9, None, 0]))
    cases.append(("bsi_negative", "bsi", "INT", {}, [-5, -3, -9, None]))
    cases.append(("bsi_zero", "bsi", "INT", {}, [0, 0, None]))
    cases.append(("bsi_all_null", "bsi", "INT", {}, [None, None]))
    cases.append(("bsi_tinyint", "bsi", "TINYINT", {}, [-128, 127, 0, None, -1]))
    cases.append(("bsi_date", "bsi", "DATE", {}, _ints(22, 100, 18000, 20000, 0.05)))
    cases.append(("bsi_ts3", "bsi", "TIMESTAMP3", {}, [1_700_000_000_000_000, -7_000, None, 0]))
    cases.append(("bsi_ts6", "bsi", "TIMESTAMP6", {}, [1_700_000_000_000_001, -7, None, 0]))
    cases.append(("bsi_decimal", "bsi", "DECIMAL10_2", {}, [12345, -99, None, 0, 10**9]))
    cases.append(("bsi_runs", "bsi", "INT", {}, [i // 7 for i in range(30000)]))
    return cases


def container_cases() -> list[tuple[str, list[tuple[str, str, bytes | None]]]]:
    """(name, [(column, index type, bytes or None for an empty index)])."""
    return [
        ("container_one", [("a", "bloom-filter", b"\x01\x02\x03")]),
        ("container_many", [("id", "bloom-filter", b"\x00" * 10), ("id", "bitmap", b"\x01" * 7),
                            ("name", "bitmap", b"\x02" * 5), ("price", "bsi", b"\x03" * 9),
                            ("ts", "bsi", b"\x04"), ("zz", "bloom-filter", b"\x05\x06")]),
        ("container_unicode", [("列名", "bloom-filter", b"\x07" * 3), ("nul\x00x", "bitmap", b"\x08")]),
        ("container_empty_index", [("a", "bitmap", None), ("b", "bloom-filter", b"\x09")]),
        ("container_columns", [(f"c{i}", "bloom-filter", bytes([i])) for i in range(20)]),
    ]


# ---- rendering -----------------------------------------------------------------------------------------------------

def _java_value(type_name: str, v: Any) -> str:
    if v is None:
        return "null"
    if type_name == "BOOLEAN":
        return "true" if v else "false"
    if type_name == "FLOAT":
        return struct.pack(">f", v).hex()
    if type_name == "DOUBLE":
        return struct.pack(">d", v).hex()
    if type_name == "STRING":
        return str(v).encode("utf-8").hex()
    if type_name == "BYTES":
        return bytes(v).hex()
    return str(int(v))


def java_input() -> str:
    lines = []
    for name, index_type, type_name, opts, values in index_cases():
        o = ";".join(f"{k}={v}" for k, v in opts.items()) or "-"
        lines.append("\t".join(["index", name, index_type, type_name, o,
                                ",".join(_java_value(type_name, v) for v in values)]))
    for name, items in container_cases():
        spec = ",".join(f"{c.encode('utf-8').hex()}:{t}:{'null' if b is None else b.hex()}" for c, t, b in items)
        lines.append("\t".join(["container", name, spec]))
    return "\n".join(lines) + "\n"


def arrow_column(type_name: str, values: Sequence[Any]) -> pa.Array:
    if type_name == "TIMESTAMP3" or type_name == "TIMESTAMP_LTZ3":
        tz = "UTC" if type_name == "TIMESTAMP_LTZ3" else None
        return pa.array([None if v is None else v // 1000 for v in values], pa.timestamp("ms", tz=tz))
    if type_name == "TIMESTAMP6":
        return pa.array(values, pa.timestamp("us"))
    if type_name == "DATE":
        return pa.array(values, pa.int32()).cast(pa.date32())
    if type_name == "TIME":
        return pa.array(values, pa.int32()).cast(pa.time32("ms"))
    if type_name == "DECIMAL10_2":
        return pa.array([None if v is None else decimal.Decimal(v).scaleb(-2) for v in values], pa.decimal128(10, 2))
    arrow = {"BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
             "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "STRING": pa.string(),
             "BYTES": pa.binary()}[type_name]
    return pa.array(values, arrow)
