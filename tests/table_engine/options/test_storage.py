"""The one table of storage option <-> AWS environment variable: what a job process is given, what a process reads
when its options name none, which variables name a principal."""

from __future__ import annotations

from table_engine.options.storage import (
    AWS_ENVIRONMENT,
    AWS_PRINCIPAL_VARIABLES,
    S3_ACCESS_KEY,
    S3_ENDPOINT,
    S3_REGION,
    S3_SECRET_KEY,
    S3_SESSION_TOKEN,
    aws_environment,
    aws_environment_value,
)


def test_every_s3_setting_a_process_can_inherit_has_one_row() -> None:
    assert [v.option for v in AWS_ENVIRONMENT] == [S3_ACCESS_KEY, S3_SECRET_KEY, S3_SESSION_TOKEN, S3_ENDPOINT,
                                                   S3_REGION]
    assert all(v.name in v.read for v in AWS_ENVIRONMENT)  # what a job is given, it reads back
    assert AWS_PRINCIPAL_VARIABLES == ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                       "AWS_PROFILE")


def test_a_job_environment_from_options_and_their_aliases() -> None:
    options = {"s3.access-key": "ak", "fs.s3.accessKeySecret": "sk", "s3.session.token": "tok",
               "fs.s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-1", "s3.path.style.access": "true"}
    assert aws_environment(options) == {
        "AWS_ACCESS_KEY_ID": "ak", "AWS_SECRET_ACCESS_KEY": "sk", "AWS_SESSION_TOKEN": "tok",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true", "AWS_REGION": "eu-west-1"}
    assert aws_environment({"s3.endpoint": "https://s3.example"}) == {"AWS_ENDPOINT_URL": "https://s3.example"}
    assert aws_environment({"warehouse.extra": "x"}) == {}


def test_reading_the_environment_prefers_the_service_specific_name() -> None:
    env = {"AWS_ENDPOINT_URL": "http://general", "AWS_ENDPOINT_URL_S3": "http://s3", "AWS_DEFAULT_REGION": "r2"}
    assert aws_environment_value(S3_ENDPOINT, env) == "http://s3"
    assert aws_environment_value(S3_REGION, env) == "r2"
    assert aws_environment_value(S3_ACCESS_KEY, {"AWS_ACCESS_KEY_ID": ""}) is None  # empty counts as unset
