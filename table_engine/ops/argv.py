"""The command-line grammar, derived from the command registry: ``<command> --warehouse W --table db.t [options]``
or ``--command-json '<json>'`` (:meth:`~table_engine.ops.base.Command.to_json`).

Shared by ``table-engine`` (:mod:`table_engine.cli`) and the Spark application (``table_engine/spark/app.py``).
An argument error is one line ``error: <prog>: <message>`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from table_engine import clock
from table_engine.errors import PartitionSpecError, TableEngineError
from table_engine.ops.base import REGISTRY, Command, arg_spec, from_json
from table_engine.ops.secrets import with_environment_secrets
from table_engine.options import parse_duration

__all__ = ["ArgumentParser", "Invocation", "build_parser", "command_argv", "command_from_args", "one_line",
           "parse_command", "parse_invocation", "parse_time_millis"]


def one_line(text: str) -> str:
    """``text`` on one line (a multi-line message's lines joined with `` | ``)."""
    return " | ".join(part.strip() for part in str(text).splitlines() if part.strip()) or str(text).strip()


class ArgumentParser(argparse.ArgumentParser):
    """An argument error is one line ``error: <message>`` on stderr and exit status 2 (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {one_line(f'{self.prog}: {message}')}\n")


# ---- value parsers -------------------------------------------------------------------------------------------------
def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value


def _partition_spec(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` -> ``{"k": "v", "k2": "v2"}`` (the one text form, ``parse_partition_text``); the values are
    typed against the table's partition columns by the command."""
    from table_engine.store.partition_spec import parse_partition_text  # loads pyarrow: only when parsing

    try:
        return parse_partition_text(text)
    except PartitionSpecError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def parse_time_millis(text: str, now_millis: int | None = None, name: str = "--older-than") -> int:
    """Epoch millis from ``1700000000000``, ``2024-05-01T12:00:00[+02:00]`` (UTC if no offset) or ``7 d ago``;
    ``name``: the argument as the user typed it (the CLI's flag, an operator's or a form's field), in errors."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    if text.lower().endswith(" ago"):
        now = clock.now_millis() if now_millis is None else now_millis
        duration = text[:-4].strip()
        try:
            return now - parse_duration(duration, key=name)
        except TableEngineError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {duration!r} before 'ago' is not a duration; write it as '7 d ago', '12 h ago' or "
                "'30 min ago' (units: d, h, min, s, ms)") from None
    try:
        dt = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not epoch millis, an ISO-8601 date-time or a duration ago such as '7 d ago'") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.UTC)
    return int(dt.timestamp() * 1000)


def _positive_int(text: str) -> int:
    """A count or a snapshot id: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except TableEngineError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not valid JSON: {e}") from None


_TYPES: dict[str, Callable[[str], Any]] = {
    "count": _positive_int, "time": parse_time_millis, "duration": _duration, "key_value": _key_value,
    "columns": _columns, "partition": _partition_spec, "json": _json,
}


def _add_argument(target: Any, f: dataclasses.Field[Any]) -> None:
    spec = arg_spec(f)
    kwargs: dict[str, Any] = {"help": spec.help or None, "dest": spec.dest}
    if f.default is not dataclasses.MISSING and f.default is not None and spec.kind != "flag":
        kwargs["default"] = f.default
    if spec.metavar:
        kwargs["metavar"] = spec.metavar
    if spec.kind == "flag":
        target.add_argument(spec.flag, action="store_true", **kwargs)
        return
    if spec.kind in ("key_value", "partition"):
        kwargs.update(action="append", default=[])
    elif spec.kind == "columns":
        kwargs["default"] = []
    if spec.kind in _TYPES:
        kwargs["type"] = _TYPES[spec.kind]
    if spec.kind == "choice":
        kwargs["choices"] = spec.choices
    if spec.required and spec.group is None:
        kwargs["required"] = True
    target.add_argument(spec.flag, **kwargs)


def _add_command(sub: Any, cls: type[Command], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(cls.name, parents=[common], help=cls.help, description=cls.help)
    groups = {name: p.add_mutually_exclusive_group(required=required) for name, required in cls.groups.items()}
    for f in dataclasses.fields(cls):  # the common fields too, as the command declares them (--database)
        spec = arg_spec(f)
        _add_argument(groups[spec.group] if spec.group else p, f)


def build_parser(prog: str = "table-engine") -> argparse.ArgumentParser:
    """The argument grammar shared by ``table-engine`` and ``table_engine/spark/app.py``, derived from the registry."""
    parser = ArgumentParser(prog=prog, description="Jobs on Paimon tables (docs/commands.md).")
    parser.add_argument("--log-level", default="INFO", help="logging level (stderr)")
    parser.add_argument("--verbose", action="store_true", help="print the traceback of a failed job")
    parser.add_argument("--command-json", metavar="JSON",
                        help="the whole command as one JSON object (instead of a command and its options)")
    common = ArgumentParser(add_help=False)
    common.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="print the traceback of a failed job")
    sub = parser.add_subparsers(dest="command", metavar="command")
    for cls in REGISTRY.values():
        _add_command(sub, cls, common)
    return parser


def command_from_args(args: argparse.Namespace) -> Command:
    """The command of a namespace parsed by :func:`build_parser` (a CommandError when it does not validate)."""
    if getattr(args, "command_json", None):
        return from_json(args.command_json)
    cls = REGISTRY[args.command]
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        spec = arg_spec(f)
        value = getattr(args, spec.dest)
        values[f.name] = dict(value) if spec.kind == "key_value" else value
    return cls(**values)


@dataclasses.dataclass(frozen=True)
class Invocation:
    """A parsed command line: the command and the process's own options."""

    command: Command
    log_level: str = "INFO"
    verbose: bool = False


def parse_invocation(argv: Sequence[str] | None, prog: str = "table-engine") -> Invocation:
    """Parse ``argv`` (a command and its options, or ``--command-json``); exits with status 2 on a bad one. The
    command's catalog options get the secrets of the environment's :data:`~table_engine.ops.secrets.SECRETS_ENV`."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.command is None and not args.command_json:
        parser.error("the following arguments are required: command (or --command-json)")
    if args.command is not None and args.command_json:
        parser.error("give a command or --command-json, not both")
    try:
        # the secret catalog options a starting process put in the environment, never in the argv (ops/secrets.py)
        cmd = with_environment_secrets(command_from_args(args))
    except TableEngineError as e:
        parser.error(str(e))
    return Invocation(cmd, args.log_level, bool(args.verbose))


def parse_command(argv: Sequence[str], prog: str = "table-engine") -> Command:
    """The command of ``argv`` (see :func:`parse_invocation`)."""
    return parse_invocation(argv, prog).command


def _opt(flag: str, value: object) -> list[str]:
    text = str(value)
    return [f"{flag}={text}"] if text.startswith("-") else [flag, text]


def command_argv(cmd: Command) -> list[str]:
    """The command line of ``cmd`` (the inverse of :func:`parse_command`): ``[name, --warehouse, W, ...]``, fields
    at their default left out, times and durations as milliseconds, a value starting with ``-`` as ``--flag=value``."""
    from table_engine.store.partition_spec import format_partition_text  # loads pyarrow: only with partitions

    argv = [cmd.name]
    for f in dataclasses.fields(cmd):
        spec, value = arg_spec(f), getattr(cmd, f.name)
        if spec.kind == "flag":
            argv += [spec.flag] if value else []
        elif spec.kind == "key_value":
            for k, v in sorted(value.items()):
                argv += _opt(spec.flag, f"{k}={v}")
        elif spec.kind == "partition":
            for s in value:
                argv += _opt(spec.flag, format_partition_text(s))
        elif spec.kind == "columns":
            argv += _opt(spec.flag, ",".join(value)) if value else []
        elif spec.kind == "json":
            argv += _opt(spec.flag, json.dumps(list(value) if isinstance(value, tuple) else value)) \
                if value is not None else []
        elif value is not None and value != f.default:
            argv += _opt(spec.flag, value)
    return argv
