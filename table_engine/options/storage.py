"""Catalog options that configure object storage (the S3 API), with Paimon's keys and pypaimon's as aliases.

They are catalog options, not table options: a :class:`~table_engine.catalog.Catalog` (and everything that opens a
table: the CLI, the Spark data source and application, the provider) passes them to the one
:func:`~table_engine.io.file_io.file_io_for` that builds the warehouse's FileIO. Keys left unset fall back to the
standard AWS environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_ENDPOINT_URL``, ``AWS_REGION``) and then to the credential chain (``AWS_PROFILE`` when boto3 is installed, web
identity, container and instance credentials).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from table_engine.options import key
from table_engine.options.config_option import ConfigOption, OptionSection
from table_engine.options.registry import OptionRegistry

S3_ENDPOINT = key("s3.endpoint").string_type().no_default_value().with_fallback_keys(
    "fs.s3.endpoint").with_description(
    "Endpoint of the S3 API, e.g. http://127.0.0.1:9000 for MinIO (default: AWS, or AWS_ENDPOINT_URL). An http:// "
    "endpoint allows plain HTTP.")
S3_ACCESS_KEY = key("s3.access-key").string_type().no_default_value().with_fallback_keys(
    "fs.s3.accessKeyId").with_description(
    "Access key id (default: the AWS credential chain). Prefer the environment or the Airflow connection: option "
    "values can end up in command lines.")
S3_SECRET_KEY = key("s3.secret-key").string_type().no_default_value().with_fallback_keys(
    "fs.s3.accessKeySecret").with_description(
    "Secret access key, with s3.access-key. Never logged, never shown in an error.")
S3_SESSION_TOKEN = key("s3.session.token").string_type().no_default_value().with_fallback_keys(
    "fs.s3.securityToken").with_description("Session token of temporary credentials.")
S3_REGION = key("s3.region").string_type().no_default_value().with_fallback_keys(
    "fs.s3.region").with_description("Region of the bucket (default: AWS_REGION, else us-east-1).")
S3_PATH_STYLE_ACCESS = key("s3.path.style.access").bool_type().default_value(False).with_fallback_keys(
    "fs.s3.path.style.access").with_description(
    "Address buckets as <endpoint>/<bucket> instead of <bucket>.<endpoint> (MinIO and most S3-compatible "
    "servers need true).")
S3_CONNECTION_TIMEOUT = key("s3.connection.timeout").duration_type().default_value(30_000).with_description(
    "Timeout of one request, from sending it to the end of its response (a larger data file is read in "
    "several ranged requests).")
S3_CONNECTION_ESTABLISH_TIMEOUT = key("s3.connection.establish.timeout").duration_type().default_value(
    5_000).with_description("Timeout of opening a connection.")
S3_ATTEMPTS_MAXIMUM = key("s3.attempts.maximum").int_type().default_value(10).with_validator(
    lambda v: v >= 0, "a number of retries >= 0").with_description(
    "Retries of a request that failed with a server error (5xx), a timeout or a broken connection, with "
    "exponential backoff. A retried conditional create whose first attempt had succeeded is recognized as ours.")
S3_RETRY_TIMEOUT = key("s3.retry.timeout").duration_type().default_value(180_000).with_description(
    "Upper bound of the time spent retrying one request.")

REGISTRY = OptionRegistry(sections=(
    OptionSection("Object storage (catalog options)", (
        S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY, S3_SESSION_TOKEN, S3_REGION, S3_PATH_STYLE_ACCESS,
        S3_CONNECTION_TIMEOUT, S3_CONNECTION_ESTABLISH_TIMEOUT, S3_ATTEMPTS_MAXIMUM, S3_RETRY_TIMEOUT),
        "Given to the catalog (`Catalog(warehouse, options)`, `--catalog-option`, the data source's options, the "
        "`paimon` connection), not to a table. pypaimon's `fs.s3.*` keys are accepted as aliases."),
))

#: options whose values are secrets: never in a log line, an argv or an error
SECRET_OPTIONS: tuple[ConfigOption[Any], ...] = (S3_SECRET_KEY, S3_SESSION_TOKEN)


class AwsVariable(NamedTuple):
    """A storage option's standard AWS environment variables (the names obstore and the AWS SDKs read)."""

    option: ConfigOption[Any]
    name: str
    """The variable another process is given the option's value in."""
    read: tuple[str, ...]
    """The variables a process reads the option from when its options give none of its keys (first set wins)."""


AWS_ENVIRONMENT: tuple[AwsVariable, ...] = (
    AwsVariable(S3_ACCESS_KEY, "AWS_ACCESS_KEY_ID", ("AWS_ACCESS_KEY_ID",)),
    AwsVariable(S3_SECRET_KEY, "AWS_SECRET_ACCESS_KEY", ("AWS_SECRET_ACCESS_KEY",)),
    AwsVariable(S3_SESSION_TOKEN, "AWS_SESSION_TOKEN", ("AWS_SESSION_TOKEN",)),
    AwsVariable(S3_ENDPOINT, "AWS_ENDPOINT_URL", ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")),
    AwsVariable(S3_REGION, "AWS_REGION", ("AWS_REGION", "AWS_DEFAULT_REGION")),
)
"""The one table of storage option <-> AWS environment variable."""

AWS_PROFILE = "AWS_PROFILE"
"""The AWS profile whose credentials apply when no access key is given (read through boto3)."""

AWS_ALLOW_HTTP = "AWS_ALLOW_HTTP"
"""Set to ``true`` beside an ``http://`` endpoint, so that obstore accepts plain HTTP."""

AWS_PRINCIPAL_VARIABLES: tuple[str, ...] = (
    *(v.name for v in AWS_ENVIRONMENT if v.option in (S3_ACCESS_KEY, S3_SECRET_KEY, S3_SESSION_TOKEN)), AWS_PROFILE)
"""The variables that name whose credentials a process uses: replaced as a whole, never mixed with other keys."""


def aws_environment_value(option: ConfigOption[Any], environ: Mapping[str, str] | None = None) -> str | None:
    """``option``'s value in the AWS environment (default: this process's): the first of its variables that is set
    and not empty; None when none is."""
    env = os.environ if environ is None else environ
    (variable,) = (v for v in AWS_ENVIRONMENT if v.option is option)
    return next((env[name] for name in variable.read if env.get(name)), None)


def aws_environment(options: Mapping[str, str]) -> dict[str, str]:
    """The AWS environment variables that carry the storage settings of ``options`` (credentials, endpoint, region;
    keys or aliases) to another process, with ``AWS_ALLOW_HTTP=true`` beside an ``http://`` endpoint."""
    env: dict[str, str] = {}
    for variable in AWS_ENVIRONMENT:
        value = variable.option.value_from(options)
        if value:
            env[variable.name] = value
    endpoint = S3_ENDPOINT.value_from(options)
    if endpoint and endpoint.startswith("http://"):
        env[AWS_ALLOW_HTTP] = "true"
    return env


def secret_keys() -> frozenset[str]:
    """Every key (with its aliases) whose value is a secret."""
    return frozenset(k for o in SECRET_OPTIONS for k in o.keys)


def is_storage_option(name: str) -> bool:
    """Whether ``name`` is one of the storage options (or an alias)."""
    return REGISTRY.find(name) is not None


@dataclass(frozen=True)
class S3Settings:
    """The S3 options of a catalog, parsed; ``repr`` hides the credentials."""

    endpoint: str | None = None
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    path_style: bool = False
    timeout_ms: int = 30_000
    connect_timeout_ms: int = 5_000
    max_retries: int = 10
    retry_timeout_ms: int = 180_000

    @staticmethod
    def of(options: Mapping[str, str]) -> S3Settings:
        """Parse the storage options out of a catalog's options (other keys are ignored)."""
        return S3Settings(
            endpoint=S3_ENDPOINT.value_from(options),
            access_key=S3_ACCESS_KEY.value_from(options),
            secret_key=S3_SECRET_KEY.value_from(options),
            session_token=S3_SESSION_TOKEN.value_from(options),
            region=S3_REGION.value_from(options),
            path_style=S3_PATH_STYLE_ACCESS.value_from(options),
            timeout_ms=S3_CONNECTION_TIMEOUT.value_from(options),
            connect_timeout_ms=S3_CONNECTION_ESTABLISH_TIMEOUT.value_from(options),
            max_retries=S3_ATTEMPTS_MAXIMUM.value_from(options),
            retry_timeout_ms=S3_RETRY_TIMEOUT.value_from(options),
        )
