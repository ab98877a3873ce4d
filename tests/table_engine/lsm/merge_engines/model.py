"""A plain-Python reference model of the merge engines: records are applied one by one per key (a dict of rows),
with the per-function ``agg``/``retract`` written out value by value, as Paimon's Java merge functions do.

The documented semantic choices of this engine are modelled (see ``table_engine.lsm.merge_engines``): a key is
visible only when it has an add since its last removal; aggregated partial-update columns of a sequence group keep
a list of operations where records older than the group's sequence are put in front (Java's ``aggReversed``) and a
removing ``-D`` starts a new list holding its own value; ``count`` counts non-null written values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class ModelError(Exception):
    """The model rejects the input (the engine must raise DataError too)."""


RETRACTABLE = {"sum", "product", "count", "collect", "merge_map", "nested_update", "last_value",
               "last_non_null_value"}


def _blank(s: Any) -> bool:
    return s is None or str(s).strip() == ""


def _agg(fn: str, acc: Any, v: Any, init: bool, opts: Mapping[str, Any]) -> tuple[Any, bool]:
    """(new accumulator, initialized) after adding ``v``."""
    if fn in ("sum", "count"):
        return (v if acc is None else acc if v is None else acc + v), True
    if fn == "product":
        return (v if acc is None else acc if v is None else acc * v), True
    if fn in ("max", "min"):
        if acc is None or v is None:
            return (v if acc is None else acc), True
        return (max(acc, v) if fn == "max" else min(acc, v)), True
    if fn == "last_value":
        return v, True
    if fn == "last_non_null_value":
        return (acc if v is None else v), True
    if fn == "first_value":
        return (acc, True) if init else (v, True)
    if fn == "first_non_null_value":
        if not init and v is not None:
            return v, True
        return acc, init
    if fn in ("bool_and", "bool_or"):
        if acc is None or v is None:
            return (v if acc is None else acc), True
        return ((acc and v) if fn == "bool_and" else (acc or v)), True
    if fn == "listagg":
        delim = opts.get("delimiter", ",")
        if _blank(v):
            return acc, True
        if _blank(acc):
            return v, True
        if not opts.get("distinct"):
            return acc + delim + v, True
        seen = set(acc.split(delim))
        out = acc
        for tok in v.split(delim):
            if _blank(tok) or tok in seen:
                continue
            seen.add(tok)
            out += delim + tok
        return out, True
    if fn == "collect":
        if acc is None and v is None:
            return None, True
        if not opts.get("distinct"):
            return (list(v) if acc is None else list(acc) if v is None else list(acc) + list(v)), True
        uniq: list[Any] = []
        for x in (acc or []) + (v or []):
            if x not in uniq:
                uniq.append(x)
        return uniq, True
    if fn == "merge_map":
        if acc is None or v is None:
            return (dict(v) if acc is None and v is not None else acc), True
        d = dict(acc)
        d.update(v)
        return d, True
    if fn == "nested_update":
        if v is None:
            return acc, True
        keys = opts.get("nested_key") or ()
        if not keys:
            return list(acc or []) + [r for r in v if r is not None], True
        d = dict(acc or {})
        for r in v:
            if r is None:
                continue
            d[tuple(r[k] for k in keys)] = r
        return d, True
    raise AssertionError(fn)


def _retract(fn: str, acc: Any, v: Any, opts: Mapping[str, Any]) -> Any:
    if fn in ("sum", "count"):
        if acc is None:
            return None if v is None else -v
        return acc if v is None else acc - v
    if fn == "product":
        if acc is None or v is None:
            return acc
        if v == 0:
            raise ModelError("division by zero")
        q = abs(acc) // abs(v)
        return q if (acc >= 0) == (v >= 0) else -q
    if fn == "last_value":
        return None
    if fn == "last_non_null_value":
        return None if v is not None else acc
    if fn == "collect":
        if acc is None or v is None:
            return acc
        pending = list(v)
        out = []
        for x in acc:
            if x in pending:
                pending.remove(x)
            else:
                out.append(x)
        return out
    if fn == "merge_map":
        if acc is None or v is None:
            return acc
        return {k: x for k, x in acc.items() if k not in v}
    if fn == "nested_update":
        if acc is None or v is None:
            return acc
        keys = opts.get("nested_key") or ()
        if not keys:
            gone = [r for r in v if r is not None]
            return [r for r in acc if r not in gone]
        gone_keys = {tuple(r[k] for k in keys) for r in v if r is not None}
        return {k: r for k, r in acc.items() if k not in gone_keys}
    raise ModelError(f"{fn} does not accept retraction")


def fold(fn: str, ops: Sequence[tuple[str, Any]], opts: Mapping[str, Any]) -> Any:
    acc: Any = None
    init = False
    for op, v in ops:
        if op == "add":
            acc, init = _agg(fn, acc, v, init, opts)
        else:
            acc = _retract(fn, acc, v, opts)
    if fn == "nested_update" and isinstance(acc, dict):
        return list(acc.values())
    if fn == "merge_map" and isinstance(acc, dict):
        return acc
    return acc


def _seq_key(values: Sequence[Any] | None) -> tuple[Any, ...]:
    assert values is not None
    return tuple((0,) if x is None else (1, x) for x in values)


@dataclass
class EngineSpec:
    engine: str = "deduplicate"
    value_names: tuple[str, ...] = ()
    ignore_delete: bool = False
    sequence_fields: tuple[str, ...] = ()
    descending: bool = False
    functions: dict[str, str] = field(default_factory=dict)       # column -> aggregate function
    fn_opts: dict[str, dict[str, Any]] = field(default_factory=dict)
    ignore_retract: set[str] = field(default_factory=set)
    groups: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)  # (sequence, protected)
    remove_on_delete: bool = False
    remove_on_group: tuple[str, ...] = ()


def _ordered(spec: EngineSpec, records: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    if not spec.sequence_fields:
        return records

    def key(item: tuple[int, tuple[str, dict[str, Any]]]) -> tuple[Any, ...]:
        i, (_, row) = item
        parts = []
        for s in spec.sequence_fields:
            x = row[s]
            if x is None:
                parts.append((0, 0))
            else:
                parts.append((1, -x if spec.descending else x))
        return (*parts, i)

    return [r for _, r in sorted(enumerate(records), key=key)]


def written(spec: EngineSpec, records: Sequence[tuple[Any, str, dict[str, Any]]]
            ) -> list[tuple[Any, str, dict[str, Any]]]:
    """Records as the writer stores them: a ``count`` value counts 1 when not null (stored values are counts)."""
    counts = [c for c, fn in spec.functions.items() if fn == "count"]
    if not counts:
        return list(records)
    return [(k, kind, {**row, **{c: int(row[c] is not None) for c in counts}}) for k, kind, row in records]


def compacted(spec: EngineSpec, records: Sequence[tuple[Any, str, dict[str, Any]]]
              ) -> list[tuple[Any, str, dict[str, Any]]]:
    """What a full compaction leaves: each visible row as one ``+I`` (retractions and deleted keys dropped)."""
    return [(k, "+I", row) for k, row in model_read(spec, records).items()]


def model_read(spec: EngineSpec, records: Sequence[tuple[Any, str, dict[str, Any]]]) -> dict[Any, dict[str, Any]]:
    """The visible rows (key -> value columns) after applying ``records`` = (key, kind, values) in order."""
    per_key: dict[Any, list[tuple[str, dict[str, Any]]]] = {}
    for k, kind, row in records:
        per_key.setdefault(k, []).append((kind, row))
    out = {}
    for k, recs in per_key.items():
        row = _merge_key(spec, _ordered(spec, recs))
        if row is not None:
            out[k] = row
    return out


def _merge_key(spec: EngineSpec, recs: list[tuple[str, dict[str, Any]]]) -> Any:
    if spec.ignore_delete:
        recs = [(kind, r) for kind, r in recs if kind in ("+I", "+U")]
    retracts = any(kind in ("-U", "-D") for kind, _ in recs)
    if spec.engine == "deduplicate":
        if not recs or recs[-1][0] in ("-U", "-D"):
            return None
        return dict(recs[-1][1])
    if spec.engine == "first-row":
        if retracts:
            raise ModelError("first-row retraction")
        return dict(recs[0][1]) if recs else None
    if spec.engine == "aggregation":
        return _aggregate(spec, recs)
    return _partial_update(spec, recs)


def _function(spec: EngineSpec, name: str) -> str:
    if name in spec.sequence_fields:
        return "last_value"
    return spec.functions.get(name, "last_non_null_value")


def _aggregate(spec: EngineSpec, recs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    ops: dict[str, list[tuple[str, Any]]] = {n: [] for n in spec.value_names}
    has_add = False
    for kind, row in recs:
        if kind == "-D" and spec.remove_on_delete:
            ops = {n: [("add", row[n])] for n in spec.value_names}
            has_add = False
            continue
        retract = kind in ("-U", "-D")
        for n in spec.value_names:
            fn = _function(spec, n)
            if retract:
                if n in spec.ignore_retract:
                    continue
                if fn not in RETRACTABLE:
                    raise ModelError(f"{fn} retraction")
            ops[n].append(("ret" if retract else "add", row[n]))
        has_add |= not retract
    if not has_add:
        return None
    return {n: fold(_function(spec, n), ops[n], spec.fn_opts.get(n, {})) for n in spec.value_names}


def removing_deletes(spec: EngineSpec, records: Sequence[tuple[Any, str, dict[str, Any]]]) -> set[int]:
    """Positions (in ``records``) of the partial-update ``-D`` records that remove their key's row
    (``remove-record-on-delete``, or passing a group of ``remove-record-on-sequence-group``) when ``records`` are
    applied in order."""
    assert spec.engine == "partial-update" and not spec.sequence_fields and not spec.ignore_delete
    per_key: dict[Any, list[int]] = {}
    for i, (k, _, _) in enumerate(records):
        per_key.setdefault(k, []).append(i)
    out: set[int] = set()
    for positions in per_key.values():
        removed: list[int] = []
        _partial_update(spec, [(records[i][1], records[i][2]) for i in positions], removed)
        out.update(positions[j] for j in removed)
    return out


def _partial_update(spec: EngineSpec, recs: list[tuple[str, dict[str, Any]]],
                    removed_at: list[int] | None = None) -> dict[str, Any] | None:
    """``removed_at`` (if given) collects the positions in ``recs`` of the ``-D`` records that remove the row."""
    names = spec.value_names
    row: dict[str, Any] = dict.fromkeys(names)
    group_of = {p: i for i, (_, prot) in enumerate(spec.groups) for p in prot}
    seq_names = {s for seqs, _ in spec.groups for s in seqs}
    gmax: list[tuple[Any, ...] | None] = [None] * len(spec.groups)
    ops: dict[str, list[tuple[str, Any]]] = {p: [] for p in group_of if p in spec.functions}
    has_add = False
    for pos, (kind, rec) in enumerate(recs):
        retract = kind in ("-U", "-D")
        if retract and not spec.groups:
            if not spec.remove_on_delete:
                raise ModelError("partial-update retraction")
            if kind == "-D":
                row, has_add = dict(rec), False
                if removed_at is not None:
                    removed_at.append(pos)
            continue
        if retract and kind == "-D" and spec.remove_on_group:
            removed = False
            for i, (seqs, _) in enumerate(spec.groups):
                if not any(s in spec.remove_on_group for s in seqs):
                    continue
                s = tuple(rec[x] for x in seqs)
                if all(x is None for x in s):
                    continue
                if gmax[i] is None or _seq_key(s) >= _seq_key(gmax[i]):
                    removed = True
            if removed:
                if removed_at is not None:
                    removed_at.append(pos)
                row, has_add = dict(rec), False
                for i, (seqs, _) in enumerate(spec.groups):
                    s = tuple(rec[x] for x in seqs)
                    gmax[i] = None if all(x is None for x in s) else s
                ops = {p: [("add", rec[p])] for p in ops}
                continue
        if not retract:
            for n in names:
                if n not in group_of and n not in seq_names and rec[n] is not None:
                    row[n] = rec[n]
        for i, (seqs, prot) in enumerate(spec.groups):
            s = tuple(rec[x] for x in seqs)
            if all(x is None for x in s):
                continue
            passed = gmax[i] is None or _seq_key(s) >= _seq_key(gmax[i])
            if passed:
                gmax[i] = s
                for x in seqs:
                    row[x] = rec[x]
            for p in prot:
                if p in ops:
                    fn = spec.functions[p]
                    if retract:
                        if p in spec.ignore_retract:
                            continue
                        if fn not in RETRACTABLE:
                            raise ModelError(f"{fn} retraction")
                        ops[p].append(("ret", rec[p]))
                    elif passed:
                        ops[p].append(("add", rec[p]))
                    else:
                        ops[p].insert(0, ("add", rec[p]))
                elif passed:
                    row[p] = None if retract else rec[p]
        has_add |= not retract
    if not has_add:
        return None
    for p, o in ops.items():
        row[p] = fold(spec.functions[p], o, spec.fn_opts.get(p, {}))
    return row


def approx_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(approx_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(approx_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)
