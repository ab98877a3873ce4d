"""The judge of our IDL subset (table_engine/catalog/hive/hive_metastore.thrift): every struct, exception, enum and
service method it declares has exactly the field ids, names, types and requiredness of Hive 2.3.10's generated
classes in hive-metastore-2.3.10.jar, read by reflection (IdlJudge.java, run as a Java single-file source program)."""

from __future__ import annotations

import json
import pathlib
import subprocess
from typing import Any

import pytest
from thriftpy2.thrift import TType

from table_engine.catalog.hive.idl import hms
from tests.hive_metastore import java, pyspark_jars

pytestmark = pytest.mark.integration

JUDGE = pathlib.Path(__file__).with_name("IdlJudge.java")
JARS = ("hive-metastore-2.3.10.jar", "libthrift-0.16.0.jar", "slf4j-api-*.jar")
_PRIMITIVE = {TType.BOOL: "bool", TType.BYTE: "byte", TType.I16: "i16", TType.I32: "i32", TType.I64: "i64",
              TType.DOUBLE: "double", TType.STRING: "string", TType.BINARY: "binary"}


def _is_enum(x: Any) -> bool:
    return isinstance(x, type) and hasattr(x, "_VALUES_TO_NAMES")


def _container_type(spec: Any) -> str:
    """The judge's spelling of a thriftpy2 type spec inside a container: a TType or (TType, argument)."""
    if isinstance(spec, int):
        return _PRIMITIVE[spec]
    ttype, arg = spec
    return _type(ttype, arg)


def _type(ttype: int, arg: Any) -> str:
    if ttype == TType.STRUCT:
        return f"struct:{arg.__name__}"
    if ttype == TType.I32 and _is_enum(arg):
        return f"enum:{arg.__name__}"
    if ttype == TType.LIST:
        return f"list<{_container_type(arg)}>"
    if ttype == TType.SET:
        return f"set<{_container_type(arg)}>"
    if ttype == TType.MAP:
        return f"map<{_container_type(arg[0])},{_container_type(arg[1])}>"
    return _PRIMITIVE[ttype]


def ours(cls: Any) -> list[dict[str, Any]]:
    """A struct's fields as thriftpy2 parsed them from our IDL, in the judge's form."""
    out = []
    for fid, spec in sorted(cls.thrift_spec.items()):
        ttype, name, *rest = spec
        arg = rest[0] if len(rest) == 2 else None
        out.append({"id": fid, "name": name, "type": _type(ttype, arg), "required": bool(rest[-1])})
    return out


def judge(names: list[str]) -> dict[str, Any]:
    jars, exe = pyspark_jars(), java()
    if jars is None or exe is None:
        pytest.skip("the judge needs java and pyspark's jars (make install)")
    classpath = ":".join(str(next(jars.glob(pattern))) for pattern in JARS)
    out = subprocess.run([exe, "-cp", classpath, str(JUDGE), *names], capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_every_declared_struct_enum_and_method_matches_hive_2_3_10() -> None:
    module = hms()
    meta = module.__thrift_meta__
    structs = {c.__name__: c for c in [*meta["structs"], *meta["exceptions"]]}
    enums = {c.__name__: c for c in meta["enums"]}
    service = module.ThriftHiveMetastore
    methods = list(service.thrift_services)
    assert len(structs) >= 25 and len(enums) == 5 and len(methods) >= 20  # the subset is what we think it is
    names = [f"struct:{n}" for n in structs] + [f"enum:{n}" for n in enums] + [f"method:{m}" for m in methods]
    real = judge(names)

    problems = []
    for name, cls in structs.items():
        if real[f"struct:{name}"] != ours(cls):
            problems.append(f"struct {name}: ours {ours(cls)}\n  Hive {real[f'struct:{name}']}")
    for name, cls in enums.items():
        if real[f"enum:{name}"] != dict(cls._NAMES_TO_VALUES):
            problems.append(f"enum {name}: ours {cls._NAMES_TO_VALUES}, Hive {real[f'enum:{name}']}")
    for m in methods:
        for part in ("args", "result"):
            mine = ours(getattr(service, f"{m}_{part}"))
            theirs = (real[f"method:{m}"] or {}).get(part)
            if mine != theirs:
                problems.append(f"{m}_{part}: ours {mine}\n  Hive {theirs}")
    assert not problems, "\n".join(problems)


def test_the_judge_sees_a_wrong_field() -> None:
    """The judge is not vacuous: a field id, a type or a name that differs from the jar is reported."""
    real = judge(["struct:LockComponent"])["struct:LockComponent"]
    mine = ours(hms().LockComponent)
    assert mine == real
    assert [dict(f, id=f["id"] + 1) if f["name"] == "tablename" else f for f in mine] != real
    assert [dict(f, type="i64") if f["name"] == "type" else f for f in mine] != real
