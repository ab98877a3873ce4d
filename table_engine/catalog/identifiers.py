"""The identifier rules of every catalog: ``db.table`` (``$branch_<b>``, ``$<system table>``), and which names a
database or table may have. One place, for the filesystem catalog and the metastore catalogs alike."""

from __future__ import annotations

from table_engine.errors import BranchError, CatalogError, ReadOnlyTableError
from table_engine.store.branches import check_branch_name
from table_engine.system_tables.global_tables import SYSTEM_DATABASE
from table_engine.table.branches import BRANCH_INFIX

DB_SUFFIX = ".db"
DEFAULT_DATABASE = "default"


def parse_identifier(identifier: str, *, creating: bool = False) -> tuple[str, str]:
    """``db.table`` -> (db, table); a bare name is in the ``default`` database; ``table`` may end in a system
    table's ``$<name>``. The one rule for every identifier the catalog takes (create, get, drop, exists, system
    tables), a CatalogError naming the identifier otherwise: each name is one directory of its own, spelled one
    way (:func:`check_name`), so ``db./t`` (which a path would read as ``db.t``) is refused everywhere.
    ``creating``: also refuse the names only new tables may not have (spaces around, control characters)."""
    parts = identifier.split(".") if isinstance(identifier, str) else []
    if len(parts) not in (1, 2) or not all(parts):
        raise CatalogError(f"table identifier {identifier!r} must be 'database.table'")
    db, name = (DEFAULT_DATABASE, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    base, dollar, system = name.partition("$")
    if system.startswith(BRANCH_INFIX[1:]):  # t$branch_<name>[$<system table>]
        branch, _, system = system[len(BRANCH_INFIX) - 1:].partition("$")
        try:
            check_branch_name(branch)
        except BranchError as e:
            raise CatalogError(f"table identifier {identifier!r}: {e}") from None
        dollar = "$" if system else ""
    try:
        check_name("database", db, existing=not creating)
        check_name("table", base, existing=not creating)
        if dollar and (not system or system != system.strip() or any(c in system for c in "$/\\")):
            raise CatalogError(f"invalid system table name {system!r}")
    except CatalogError as e:
        raise CatalogError(f"table identifier {identifier!r}: {e}") from None
    return db, name


def check_name(kind: str, name: str, *, existing: bool = False) -> None:
    r"""Reject a database or table name that would not be one directory of its own: empty, ``/`` or ``\``,
    ``$`` (system tables), ``.`` (the identifier separator); and, unless it names an ``existing`` table (made by
    hand or by an older version, which keeps working), leading or trailing spaces and control characters."""
    problem = None
    if not name:
        problem = "is empty"
    elif not existing and name != name.strip():
        problem = "has leading or trailing spaces"
    elif any(c in name for c in "/\\"):
        problem = "contains a path separator"
    elif "$" in name:
        problem = "contains '$' (reserved for system tables such as t$snapshots)"
    elif "." in name:
        problem = "contains '.' (the database.table separator)"
    elif not existing and any(ord(c) < 32 or ord(c) == 127 for c in name):
        problem = "contains a control character"
    if problem:
        raise CatalogError(f"invalid {kind} name {name!r}: it {problem}")


def parse_object_identifier(identifier: str, kind: str, *, creating: bool = False) -> tuple[str, str]:
    """``db.name`` -> (db, name) for an object that has no system tables or branches (a view, a rename target):
    :func:`parse_identifier`'s rule without the ``$`` forms."""
    db, name = parse_identifier(identifier, creating=creating)
    if "$" in name:
        raise CatalogError(f"{kind} identifier {identifier!r} names a system table or a branch: a {kind} has "
                           "neither")
    return db, name


def refuse_system(name: str, identifier: str, action: str) -> None:
    """A ReadOnlyTableError for ``action`` on a system table (``name`` holds a ``$``)."""
    if "$" in name:
        raise ReadOnlyTableError(f"table {identifier} is a read-only system table: {action} is not allowed")


def refuse_system_database(name: str) -> None:
    """A CatalogError for creating database ``sys``: the global system tables' (``sys.catalog_options``), as
    Paimon's ``checkNotSystemDatabase``."""
    if name == SYSTEM_DATABASE:
        raise CatalogError(f"database {name!r} is the system database ({name}.catalog_options): it cannot be "
                           "created")
