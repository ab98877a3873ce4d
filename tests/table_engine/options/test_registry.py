"""The option registry's validation: one decision for core, catalog and format-table options."""

from __future__ import annotations

import pytest

from table_engine.errors import OptionError
from table_engine.options import OptionRegistry, OptionSection, key

LIMIT = key("limit").int_type().default_value(1).with_description("A limit.")
SECRET = key("s3.secret-key").int_type().no_default_value().with_description("A secret.")
REGISTRY = OptionRegistry(
    sections=(OptionSection("Main", (LIMIT, SECRET)),), recognized_prefixes={"jdbc.": "driver properties"},
    noun="catalog", not_implemented=frozenset({"cache-enabled"}), not_implemented_prefixes=("hive.",),
    is_secret=lambda name: "secret" in name)


@pytest.mark.parametrize("name", ["cache-enabled", "hive.metastore.uris"])
def test_not_implemented_keys_are_refused_by_name(name: str) -> None:
    assert not REGISTRY.is_known(name)
    with pytest.raises(OptionError, match=f"^Catalog option '{name}' is a Paimon catalog option this engine does "
                                          "not implement.$"):
        REGISTRY.validate({name: "x"})


def test_unknown_keys_get_a_suggestion_and_bad_values_are_named() -> None:
    with pytest.raises(OptionError, match="Unknown catalog option 'limt'. Did you mean 'limit'?"):
        REGISTRY.validate({"limt": "1"})
    with pytest.raises(OptionError, match="limit"):
        REGISTRY.validate({"limit": "many"})
    REGISTRY.validate({"limit": "2", "jdbc.sslmode": "require"})


def test_every_problem_in_one_error_and_no_secret_value() -> None:
    with pytest.raises(OptionError) as e:
        REGISTRY.validate({"cache-enabled": "true", "limit": "many", "s3.secret-key": "hunter2"})
    text = str(e.value)
    assert text.startswith("3 invalid catalog options:")
    assert "s3.secret-key' (a secret: not shown)" in text and "hunter2" not in text
