"""Secret catalog options across a process boundary, never in an argv (ADR 0042, ADR 0044).

A process that starts a job (the provider's hook: spark-submit, the engine's CLI, a small job) gives the job the
object-store credentials as the standard AWS variables (:func:`table_engine.options.storage.aws_environment`), and
every other secret catalog option (``jdbc.password``: :func:`table_engine.catalog.options.is_secret`) as one JSON
object in :data:`SECRETS_ENV` (:func:`secrets_environment`). The job's command line parser
(:func:`table_engine.ops.argv.parse_invocation`) adds those to its command's catalog options in memory
(:func:`with_environment_secrets`), where a command's own options win.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from table_engine.errors import OptionError

if TYPE_CHECKING:
    from table_engine.ops.base import Command

SECRETS_ENV = "PAIMON_CATALOG_SECRETS"
"""The environment variable of a job process holding its secret catalog options (a JSON object) that no AWS
variable carries."""


def secrets_environment(options: Mapping[str, str]) -> dict[str, str]:
    """The environment that carries the secrets of ``options`` that no AWS variable carries: ``{SECRETS_ENV:
    '<json>'}``, or nothing."""
    from table_engine.catalog.options import is_secret
    from table_engine.options import storage

    carried = storage.secret_keys()  # the object store's: AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
    secrets = {str(k): str(v) for k, v in options.items() if is_secret(str(k)) and k not in carried}
    return {SECRETS_ENV: json.dumps(secrets, sort_keys=True)} if secrets else {}


def environment_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The secret catalog options of :data:`SECRETS_ENV` in ``environ`` (default: this process's); an OptionError
    that does not show the value when it is not a JSON object of strings."""
    text = (os.environ if environ is None else environ).get(SECRETS_ENV)
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise OptionError(f"environment variable {SECRETS_ENV} must be a JSON object of strings (its value is a "
                          "secret: not shown)")
    return {str(k): v for k, v in value.items()}


def with_environment_secrets(cmd: Command, environ: Mapping[str, str] | None = None) -> Command:
    """``cmd`` with the secret catalog options of :data:`SECRETS_ENV` under its own catalog options (in memory)."""
    secrets = environment_secrets(environ)
    if not secrets:
        return cmd
    return dataclasses.replace(cmd, catalog_options={**secrets, **dict(cmd.catalog_options)})
