"""Shared fixtures: a fresh warehouse per test."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from table_engine import Catalog


@pytest.fixture
def warehouse(tmp_path: pathlib.Path) -> str:
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse: str) -> Catalog:
    from table_engine import Catalog

    return Catalog(warehouse)
