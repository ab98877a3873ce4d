"""The command base class, per-field metadata, the registry and the JSON form.

A command is a frozen, keyword-only dataclass registered with :func:`command`. Each field declares with :func:`arg`
its help text and how the command line spells it (the flag, the kind of value, a mutually exclusive group); the
CLI parser (:mod:`table_engine.ops.argv`), the command docs (:mod:`table_engine.ops.docs`) and the JSON form
(:meth:`Command.to_json` / :func:`from_json`) are derived from these declarations. Validation happens at
construction (:meth:`Command.__post_init__`): a :class:`~table_engine.errors.CommandError` naming the field.

This module imports no pyarrow and nothing of the engine below the error tree: the provider's DAG files import it
when they are parsed.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from table_engine.errors import CommandError

__all__ = ["KINDS", "REGISTRY", "ArgSpec", "Command", "CommandEntry", "arg", "command", "command_class", "entry",
           "from_json", "registers"]

KINDS = ("text", "flag", "count", "time", "duration", "choice", "key_value", "columns", "partition", "json")
"""How a field's value is written on the command line and typed in the dataclass:

* ``text``: a string (``str | None``); ``flag``: a boolean switch;
* ``count``: an integer >= 1 (a count or a snapshot id);
* ``time``: epoch milliseconds (the command line also takes an ISO-8601 date-time or ``'<duration> ago'``);
* ``duration``: milliseconds (the command line takes Paimon's form, ``'7 d'``, ``'12 h'``);
* ``choice``: one of the field's ``choices``;
* ``key_value``: a ``{key: value}`` mapping of strings (``--flag k=v``, repeatable);
* ``columns``: a tuple of column names (``--flag a,b``);
* ``partition``: a tuple of partition specs, each a ``{column: value text}`` dict (``--flag k=v,k2=v2``,
  repeatable), typed against the table's partition columns when the command runs.
"""


@dataclass(frozen=True)
class ArgSpec:
    """The command-line and documentation side of one command field."""

    help: str
    flag: str
    kind: str = "text"
    choices: tuple[str, ...] = ()
    group: str | None = None
    required: bool = False
    metavar: str | None = None

    @property
    def dest(self) -> str:
        """The attribute of the parsed argparse namespace (the flag's name, as argparse spells it)."""
        return self.flag.lstrip("-").replace("-", "_")


def arg(help: str, *, flag: str | None = None, kind: str = "text", choices: tuple[str, ...] = (),
        group: str | None = None, required: bool = False, metavar: str | None = None,
        default: Any = None) -> Any:
    """A command field: its help, its flag (default ``--<field-name>``, set by :func:`command`), its kind (one of
    :data:`KINDS`), its mutually exclusive ``group`` (see :attr:`Command.groups`) and whether it is ``required``
    (a required field has no default)."""
    if kind not in KINDS:
        raise ValueError(f"unknown argument kind {kind!r}")
    spec = ArgSpec(help=help, flag=flag or "", kind=kind, choices=choices, group=group, required=required,
                   metavar=metavar)
    metadata = {"arg": spec}
    if required:
        return dataclasses.field(metadata=metadata)
    if kind in ("key_value",):
        return dataclasses.field(default_factory=dict, metadata=metadata)
    if kind in ("columns", "partition"):
        return dataclasses.field(default=(), metadata=metadata)
    if kind == "flag":
        return dataclasses.field(default=bool(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True, kw_only=True)
class Command:
    """A job on one table of one warehouse. Subclasses are registered with :func:`command`."""

    name: ClassVar[str] = ""
    """The command's name on the command line (``expire-snapshots``)."""
    spark_job: ClassVar[bool] = False
    """Whether the Spark application runs it as a Spark job (else it runs with the engine on the driver: metadata
    commands, and the few that rewrite data there, e.g. ``maintain`` and ``compact-database``)."""
    help: ClassVar[str] = ""
    groups: ClassVar[Mapping[str, bool]] = {}
    """Mutually exclusive groups of fields: group name -> whether one of its fields is required."""

    warehouse: str = arg("warehouse path or URI", required=True)
    table: str = arg("database.table", required=True)
    catalog_options: Mapping[str, str] = arg("catalog option (repeatable)", flag="--catalog-option", kind="key_value",
                                             metavar="K=V")

    # ---- validation ---------------------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            spec = arg_spec(f)
            value = getattr(self, f.name)
            normalized = _check(self.name, spec, value)
            if normalized is not value:
                object.__setattr__(self, f.name, normalized)
        for group, required in self.groups.items():
            members = [arg_spec(f) for f in dataclasses.fields(self) if arg_spec(f).group == group]
            given = [s.flag for s in members if _is_set(getattr(self, _field_of(self, s)))]
            flags = ", ".join(s.flag for s in members)
            if len(given) > 1:
                raise CommandError(f"{self.name}: {' and '.join(given)} exclude each other (give one of {flags})")
            if required and not given:
                raise CommandError(f"{self.name}: one of {flags} is required")

    def needs_spark(self) -> bool:
        """Whether running this command needs a SparkSession. A Spark job whose arguments need none (a
        ``merge-into`` of files) may also run with the engine alone: the CLI, the provider's ``runner='local'``."""
        return self.spark_job

    # ---- the JSON form ------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """``{"command": name, field: value, ...}`` in JSON types (mappings as objects, tuples as arrays)."""
        out: dict[str, Any] = {"command": self.name}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Mapping):
                value = dict(value)
            elif isinstance(value, tuple):
                value = [dict(v) if isinstance(v, Mapping) else v for v in value]
            out[f.name] = value
        return out

    def to_json(self) -> str:
        """The command as one JSON object (what the provider sends to the Spark application)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Command:
        """The command of :meth:`to_dict`'s form (``command`` must name ``cls`` or a registered command)."""
        return from_json(data) if cls is Command else _build(cls, data)


def _field_of(cmd: Command, spec: ArgSpec) -> str:
    return next(f.name for f in dataclasses.fields(cmd) if arg_spec(f) is spec)


def arg_spec(f: dataclasses.Field[Any]) -> ArgSpec:
    spec = f.metadata.get("arg")
    if not isinstance(spec, ArgSpec):
        raise TypeError(f"command field {f.name} is not declared with table_engine.ops.arg(...)")
    return spec


def _is_set(value: Any) -> bool:
    return value is not None and value is not False and value != () and value != {}


def _check(command: str, spec: ArgSpec, value: Any) -> Any:
    """``value`` checked against ``spec`` (lists become tuples, mappings dicts); a CommandError naming the flag."""
    def bad(problem: str) -> CommandError:
        return CommandError(f"{command}: {spec.flag} {problem}")

    kind = spec.kind
    if kind == "json":
        return _check_json(spec, value, bad)
    if kind in ("flag", "key_value", "columns", "partition"):
        return _check_structured(spec, value, bad)
    if value is None:
        if spec.required:
            raise bad("is required")
        return value
    if kind in ("count", "time", "duration"):
        return _check_integer(spec, value, bad)
    return _check_string(spec, value, bad)


def _check_integer(spec: ArgSpec, value: Any, bad: Callable[[str], CommandError]) -> Any:
    """A ``count`` (at least 1), ``time`` or ``duration`` (not negative) value, not None."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad(f"must be an integer, got {value!r}")
    if spec.kind == "count" and value < 1:
        raise bad(f"must be at least 1, got {value}")
    if spec.kind == "duration" and value < 0:
        raise bad(f"must not be negative, got {value}")
    return value


def _check_string(spec: ArgSpec, value: Any, bad: Callable[[str], CommandError]) -> Any:
    """A string value, not None (a ``choice`` one of its choices; non-empty when required)."""
    if not isinstance(value, str):
        raise bad(f"must be a string, got {value!r}")
    if spec.kind == "choice" and value not in spec.choices:
        raise bad(f"must be one of {', '.join(spec.choices)}, got {value!r}")
    if spec.required and not value:
        raise bad("must not be empty")
    return value


def _check_json(spec: ArgSpec, value: Any, bad: Callable[[str], CommandError]) -> Any:
    """A ``json`` value: anything JSON can hold (an array as a tuple)."""
    if value is None:
        if spec.required:
            raise bad("is required")
        return value
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise bad(f"must be a JSON value, got {value!r}") from None
    return tuple(value) if isinstance(value, list) else value


def _check_structured(spec: ArgSpec, value: Any, bad: Callable[[str], CommandError]) -> Any:
    """A ``flag``, ``key_value``, ``columns`` or ``partition`` value checked (None is not one of them)."""
    kind = spec.kind
    if kind == "flag":
        if not isinstance(value, bool):
            raise bad(f"must be true or false, got {value!r}")
        return value
    if kind == "key_value":
        if not isinstance(value, Mapping) or not all(isinstance(k, str) and k and isinstance(v, str)
                                                     for k, v in value.items()):
            raise bad(f"must map non-empty keys to strings, got {value!r}")
        return value if isinstance(value, dict) else dict(value)
    if kind == "columns":
        if not isinstance(value, (list, tuple)) or not all(isinstance(c, str) and c for c in value):
            raise bad(f"must be column names, got {value!r}")
        return value if isinstance(value, tuple) else tuple(value)
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(s, Mapping) and s and all(isinstance(k, str) and k and isinstance(v, str)
                                                 for k, v in s.items()) for s in value):
        raise bad(f"must be partition specs ({{column: value}} with at least one column), got {value!r}")
    if spec.required and not value:
        raise bad("is required (at least one)")
    return tuple(dict(s) for s in value)


# ---- the registry -------------------------------------------------------------------------------------------------
REGISTRY: dict[str, type[Command]] = {}
"""Every command class by name, in registration order."""

C = TypeVar("C", bound=type[Command])


def command(name: str, *, help: str, spark_job: bool = False,
            groups: Mapping[str, bool] | None = None) -> Callable[[C], C]:
    """Register a command class under ``name``: a frozen, keyword-only dataclass of :func:`arg` fields."""
    def register(cls: C) -> C:
        if name in REGISTRY:
            raise ValueError(f"command {name!r} is registered twice")
        cls.name, cls.help, cls.spark_job = name, help, spark_job
        cls.groups = dict(groups or {})
        for f in dataclasses.fields(cls):
            spec = arg_spec(f)
            if not spec.flag:
                f.metadata = type(f.metadata)({"arg": dataclasses.replace(spec, flag="--" + f.name.replace("_", "-"))})
        REGISTRY[name] = cls
        return cls
    return register


# ---- what each command does: one entry per command ----------------------------------------------------------------
RUNNER_MODULES = {"local": ("table_engine.ops.run", "table_engine.ops.run_changes", "table_engine.ops.run_tables"),
                  "spark": ("table_engine.spark.jobs.run", "table_engine.spark.jobs.change_job"),
                  "input_size": ("table_engine.spark.jobs.driver_jobs",),
                  "driver": ("table_engine.spark.jobs.driver_jobs",)}
"""The modules that register each kind of :class:`CommandEntry` function, imported when one is first asked for (the
Spark side imports pyspark: only a Spark driver needs it; this module stays light)."""


@dataclass
class CommandEntry:
    """Everything the application does with one command: "what does ``compact`` do?" has this one answer.

    :param command: the command class.
    :param local: runs it with the engine in this process, ``(cmd, catalog) -> result fields``
        (:mod:`table_engine.ops.run`); the CLI's, and the Spark driver's for metadata-only commands.
    :param spark: for a ``spark_job`` command, runs it as a Spark job, ``(cmd, SparkSession) -> result fields``
        (:mod:`table_engine.spark.jobs.run`).
    :param input_size: for a ``spark_job`` command that may run on the driver when small, the bytes it would read
        (None: it must be a Spark job) (:mod:`table_engine.spark.jobs.driver_jobs`).
    :param driver: for such a command, runs it with the engine on the driver with the Spark job's result,
        ``cmd -> result fields``, where that differs from ``local`` (None: as the CLI runs it,
        :func:`table_engine.ops.run.run_command`) (:mod:`table_engine.spark.jobs.driver_jobs`).
    """

    command: type[Command]
    local: Callable[[Any, Any], dict[str, Any]] | None = None
    spark: Callable[[Any, Any], dict[str, Any]] | None = None
    input_size: Callable[[Any], int | None] | None = None
    driver: Callable[[Any], dict[str, Any]] | None = None


_ENTRIES: dict[type[Command], CommandEntry] = {}


F = TypeVar("F", bound=Callable[..., Any])


def registers(kind: str, cls: type[Command]) -> Callable[[F], F]:
    """Register the decorated function as the ``kind`` (``local``, ``spark``, ``input_size``, ``driver``) of
    ``cls``'s entry."""
    if kind not in RUNNER_MODULES:
        raise ValueError(f"unknown runner kind {kind!r}; expected one of {', '.join(RUNNER_MODULES)}")

    def register(fn: F) -> F:
        setattr(_ENTRIES.setdefault(cls, CommandEntry(cls)), kind, fn)
        return fn
    return register


def entry(cls: type[Command] | str, *kinds: str) -> CommandEntry:
    """The entry of a command class (or name), with the modules that register ``kinds`` (default: all) imported."""
    cls = command_class(cls) if isinstance(cls, str) else cls
    for kind in kinds or tuple(RUNNER_MODULES):
        for module in RUNNER_MODULES[kind]:
            importlib.import_module(module)
    return _ENTRIES.setdefault(cls, CommandEntry(cls))


def command_class(name: str) -> type[Command]:
    """The command class registered as ``name``; a CommandError naming the known commands otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise CommandError(f"unknown command {name!r}; expected one of {', '.join(REGISTRY)}") from None


def from_json(data: str | Mapping[str, Any]) -> Command:
    """The command of a JSON object (text or parsed) of :meth:`Command.to_json`'s form."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as e:
            raise CommandError(f"the command is not valid JSON: {e}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("command"), str):
        raise CommandError("the command JSON must be an object with a \"command\" name")
    return _build(command_class(data["command"]), data)


def _build(cls: type[Command], data: Mapping[str, Any]) -> Command:
    if data.get("command", cls.name) != cls.name:
        raise CommandError(f"the command JSON names {data.get('command')!r}, not {cls.name!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names - {"command"})
    if unknown:
        raise CommandError(f"{cls.name}: unknown field(s) {', '.join(unknown)} in the command JSON")
    missing = sorted(f.name for f in dataclasses.fields(cls)
                     if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                     and f.name not in data)
    if missing:
        raise CommandError(f"{cls.name}: the command JSON lacks {', '.join(missing)}")
    return cls(**{k: v for k, v in data.items() if k != "command"})
