"""The command layer: every registered command round-trips through its JSON form and through the command line,
validation names the field, and importing the registry loads no pyarrow."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from table_engine.errors import CommandError, TableEngineError
from table_engine.ops import REGISTRY, Command, Compact, CompactDatabase, ConsumeChangelog, Rollback, Write, from_json
from table_engine.ops.argv import command_argv, parse_command
from table_engine.ops.base import ArgSpec, arg_spec
from tests.budget import examples

ROOT = pathlib.Path(__file__).resolve().parents[3]
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_NAME = _TEXT.filter(bool)


def _value(f: dataclasses.Field[Any], spec: ArgSpec) -> st.SearchStrategy[Any]:
    optional = f.default is None
    strategies: dict[str, st.SearchStrategy[Any]] = {
        "text": _NAME if spec.required else _TEXT,
        "flag": st.booleans(),
        "count": st.integers(1, 2**62),
        "time": st.integers(-2**62, 2**62),
        "duration": st.integers(0, 2**62),
        "choice": st.sampled_from(spec.choices),
        "key_value": st.dictionaries(_NAME, _TEXT, max_size=3),
        "columns": st.lists(_NAME, max_size=3).map(tuple),
        "partition": st.lists(st.dictionaries(_NAME, _TEXT, min_size=1, max_size=3), max_size=3).map(tuple),
        "json": st.lists(st.fixed_dictionaries({"check": st.just("row_count"), "min": st.integers(0, 10)},
                                               optional={"name": _NAME}), min_size=1, max_size=1).map(tuple),
    }
    value = strategies[spec.kind]
    if spec.kind == "json" and f.name == "changes":  # alter-table's
        value = st.lists(st.fixed_dictionaries({"action": st.just("add-column"), "name": _NAME,
                                                "type": st.sampled_from(["BIGINT", "STRING", "DECIMAL(10, 2)"])},
                                               optional={"comment": _TEXT, "after": _NAME}),
                         min_size=1, max_size=2).map(tuple)
    return st.none() | value if optional else value


@st.composite
def commands(draw: st.DrawFn) -> Command:
    cls = draw(st.sampled_from(list(REGISTRY.values())))
    values = {f.name: draw(_value(f, arg_spec(f))) for f in dataclasses.fields(cls)}
    try:
        return cls(**values)
    except CommandError:  # e.g. both or neither fields of a required exclusive group
        assume(False)
        raise


@settings(max_examples=examples(200), deadline=None)
@given(commands())
def test_every_command_round_trips_through_json(cmd: Command) -> None:
    text = cmd.to_json()
    assert from_json(text) == cmd
    assert from_json(json.loads(text)) == cmd
    assert type(cmd).from_dict(cmd.to_dict()) == cmd
    assert json.loads(text)["command"] == cmd.name


@settings(max_examples=examples(200), deadline=None)
@given(commands())
def test_the_command_line_builds_the_same_command(cmd: Command) -> None:
    # command-line text is trimmed (keys, columns) and a duration text is Paimon's: keep the values plain
    for f in dataclasses.fields(cmd):
        spec, value = arg_spec(f), getattr(cmd, f.name)
        if spec.kind == "key_value":
            assume(all(k == k.strip() and k and "=" not in k for k in value))
        if spec.kind == "columns":
            assume(all(c == c.strip() and "," not in c for c in value))
        if spec.kind in ("time", "duration") and value is not None:
            assume(value >= 0)
        assume(value != "--")  # argparse drops a "--" value (`--table=--`), as it always did
    assert parse_command(command_argv(cmd)) == cmd


def test_the_registry_declares_every_command() -> None:
    assert list(REGISTRY) == ["write", "compact", "compact-database", "expire-snapshots", "expire-changelogs",
                              "clear-consumers",
                              "reset-consumer", "compact-manifest", "refresh-object-table", "remove-unexisting-files",
                              "repair", "create-tag", "expire-tags",
                              "expire-partitions", "remove-orphan-files", "health", "history", "maintain",
                              "rollback",
                              "consume-changelog",
                              "delete-tag", "drop-partitions", "mark-partition-done", "rewrite-file-index",
                              "rescale", "check", "create-branch", "delete-branch", "rename-branch", "fast-forward",
                              "delete", "update", "merge-into", "alter-table", "clone", "migrate-table",
                              "migrate-database"]
    assert {n for n, c in REGISTRY.items() if c.spark_job} == {"write", "compact", "consume-changelog", "merge-into"}
    for cls in REGISTRY.values():
        assert cls.help and all(arg_spec(f).help and arg_spec(f).flag.startswith("--")
                                for f in dataclasses.fields(cls))


@pytest.mark.parametrize(("build", "text"), [
    (lambda: Compact(warehouse="w", table="db.t", parallelism=0), "compact: --parallelism must be at least 1"),
    (lambda: Compact(warehouse="w", table="", full=True), "compact: --table must not be empty"),
    (lambda: Compact(warehouse="w", table="db.t", partitions=({},)), "compact: --partition must be partition"),
    (lambda: Compact(warehouse="w", table="db.t", idle_time_millis=-1), "--idle-time must not be negative"),
    (lambda: Compact(warehouse="w", table="db.t", full="yes"), "compact: --full must be true or false"),
    (lambda: Compact(warehouse="w", table="db.t", buckets="0-x"), "compact: --buckets '0-x': '0-x' is not a bucket"),
    (lambda: CompactDatabase(warehouse="w", table="db", including_tables="("),
     "compact-database: --including-tables '(' is not a regular expression"),
    (lambda: CompactDatabase(warehouse="w", table="db.t"), "--database 'db.t' must be a database name"),
    (lambda: Rollback(warehouse="w", table="db.t"), "rollback: one of --snapshot, --tag is required"),
    (lambda: Rollback(warehouse="w", table="db.t", snapshot=1, tag="t"), "--snapshot and --tag exclude each other"),
    (lambda: Write(warehouse="w", table="db.t", source="s", format="xlsx"), "write: --format must be one of"),
    (lambda: Write(warehouse="w", table="db.t", source="s", catalog_options={"": "x"}), "--catalog-option"),
    (lambda: ConsumeChangelog(warehouse="w", table="db.t", consumer_id="c", output="o", to_snapshot=0),
     "--to-snapshot must be at least 1"),
    (lambda: from_json('{"command": "vacuum"}'), "unknown command 'vacuum'"),
    (lambda: from_json('{"command": "compact", "warehouse": "w", "table": "t", "fast": true}'),
     "compact: unknown field(s) fast"),
    (lambda: from_json('{"command": "compact", "warehouse": "w"}'), "compact: the command JSON lacks table"),
    (lambda: from_json("[1"), "not valid JSON"),
    (lambda: from_json("[1]"), "must be an object"),
])
def test_validation_names_the_field(build: Any, text: str) -> None:
    with pytest.raises(CommandError) as e:
        build()
    assert text in str(e.value) and len(str(e.value).splitlines()) == 1
    assert isinstance(e.value, TableEngineError) and isinstance(e.value, ValueError)


def test_commands_are_frozen_and_keyword_only() -> None:
    cmd = Compact(warehouse="w", table="db.t", partitions=[{"dt": "1"}])  # type: ignore[arg-type]
    assert cmd.partitions == ({"dt": "1"},)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cmd.full = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        Compact("w", "db.t")  # type: ignore[misc]


def test_importing_the_registry_loads_no_pyarrow() -> None:
    code = ("import sys, table_engine.ops, table_engine.ops.argv; "
            "assert 'pyarrow' not in sys.modules, sorted(m for m in sys.modules if m.startswith('pyarrow'))")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def test_docs_commands_md_is_not_stale() -> None:
    from table_engine.ops.docs import render_markdown

    assert (ROOT / "docs" / "commands.md").read_text() == render_markdown(), (
        "docs/commands.md is stale: run `python -m table_engine.ops --markdown > docs/commands.md`")


def test_every_command_has_one_entry_saying_what_it_does() -> None:
    """Each command's entry: its local runner; a Spark job also its Spark runner and its input-size rule (small jobs
    on the driver); a metadata-only command neither."""
    from table_engine.ops import REGISTRY
    from table_engine.ops.base import entry

    for name, cls in REGISTRY.items():
        e = entry(name)
        assert e.command is cls and e.local is not None, name
        assert (e.spark is not None) is cls.spark_job and (e.input_size is not None) is cls.spark_job, name
    from table_engine.spark.jobs.run import spark_compact

    assert entry("compact").spark is spark_compact


def test_a_time_that_is_no_duration_ago_names_what_is_wrong() -> None:
    import argparse

    from table_engine.ops.argv import parse_time_millis

    assert parse_time_millis("2 h ago", now_millis=10_000_000) == 10_000_000 - 7_200_000
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'one day ago': 'one day' before 'ago' is not a duration; "
                                                         r"write it as '7 d ago'"):
        parse_time_millis("one day ago")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'yesterday' is not epoch millis, an ISO-8601 date-time "
                                                         r"or a duration ago such as '7 d ago'$"):
        parse_time_millis("yesterday")
