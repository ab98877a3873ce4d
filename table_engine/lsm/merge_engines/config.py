"""The merge configuration of a primary-key table, parsed and validated from its schema and options.

:func:`validate_config` is the check run (by :func:`~.registry.validate_merge_engine`) when a table is created or
its schema changes; the merge functions are built from the same :class:`MergeConfig`, so a table that passed
validation always gets a working merge function. Errors name the column, the option and the function involved: a
bad option value or a conflict of options is an :class:`~table_engine.errors.OptionError`, a column or type problem
a :class:`~table_engine.errors.SchemaError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from table_engine.core_enums import ChangelogProducer
from table_engine.core_options import (
    AGGREGATION_REMOVE_RECORD_ON_DELETE,
    CHANGELOG_PRODUCER,
    CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS,
    FIELDS_DEFAULT_AGG_FUNC,
    PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE,
    PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP,
    CoreOptions,
)
from table_engine.errors import OptionError, SchemaError
from table_engine.format.schema_file import TableSchema
from table_engine.lsm.merge_engines.aggregators import DEFAULT_FUNCTION, Aggregator, FieldOptions, aggregator_class
from table_engine.options import parse_bool
from table_engine.types import DataField

FIELDS_PREFIX = "fields."
DEFAULT_AGG_KEY = FIELDS_DEFAULT_AGG_FUNC.key
#: per-field properties read by the merge engines
FIELD_PROPERTIES = ("aggregate-function", "ignore-retract", "sequence-group", "list-agg-delimiter", "distinct",
                    "nested-key", "nested-key-null-strategy", "nested-sequence-field", "count-limit")
#: types a partial-update sequence group may be ordered by (the merge-engine docs)
SEQUENCE_GROUP_ROOTS = frozenset({"DECIMAL", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE",
                                  "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"})
_NULL_STRATEGIES = ("merge", "ignore", "error")


@dataclass(frozen=True)
class SequenceGroup:
    """``fields.<s1,s2>.sequence-group = 'a,b'``: fields a, b are updated only by records whose (s1, s2) is not
    smaller than the row's, and a record whose s1, s2 are all null does not touch the group."""

    option: str
    sequence_fields: tuple[str, ...]
    protected: tuple[str, ...]


@dataclass(frozen=True)
class FieldFunction:
    """The aggregate function of one column."""

    field: DataField
    function: str
    options: FieldOptions
    #: where the function comes from (an option key, or a description), for messages
    source: str

    def create(self) -> Aggregator:
        return aggregator_class(self.function, self.source)(self.field, self.options)


@dataclass(frozen=True)
class MergeConfig:
    """Everything the merge engines need to know about a primary-key table."""

    engine: str
    table: str
    primary_keys: tuple[str, ...]
    value_fields: tuple[DataField, ...]
    sequence_fields: tuple[str, ...]
    ignore_delete: bool
    #: aggregation: every value column; partial-update: the columns that have an aggregate function
    functions: Mapping[str, FieldFunction] = field(default_factory=dict)
    groups: tuple[SequenceGroup, ...] = ()
    remove_record_on_delete: bool = False
    #: partial-update.remove-record-on-sequence-group: sequence fields whose group's -D removes the row
    remove_on_sequence_group: tuple[str, ...] = ()

    @staticmethod
    def parse(schema: TableSchema, table: str | None = None) -> MergeConfig:
        return _parse(schema, table or "table")

    def group_of(self, name: str) -> SequenceGroup | None:
        for g in self.groups:
            if name in g.protected:
                return g
        return None

    def is_group_sequence_field(self, name: str) -> bool:
        return any(name in g.sequence_fields for g in self.groups)


def validate_config(schema: TableSchema, table: str | None = None) -> None:
    """Validate the merge configuration of a table, and its changelog producer; raises OptionError/SchemaError."""
    opts = CoreOptions(schema.options)
    if not schema.primary_keys:
        if opts.get(CHANGELOG_PRODUCER) is not ChangelogProducer.NONE:
            raise OptionError(f"table {table}: can not set {CHANGELOG_PRODUCER.key} on table without primary keys, "
                              "please define primary keys.")
        return
    MergeConfig.parse(schema, table)
    ignored = opts.get(CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS) or []
    unknown = [f for f in ignored if f not in schema.field_names()]
    if unknown:
        raise SchemaError(f"table {table}: {CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS.key} names unknown "
                          f"columns {unknown}; columns are {schema.field_names()}")


# ---------------------------------------------------------------------------------------------------- parsing

def field_property(options: Mapping[str, str], name: str, prop: str) -> str | None:
    """The value of option ``fields.<name>.<prop>``, or None."""
    return options.get(f"{FIELDS_PREFIX}{name}.{prop}")


def _split(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _bool(options: Mapping[str, str], key: str) -> bool:
    raw = options.get(key)
    return False if raw is None else parse_bool(raw, key=key)


def field_options(options: Mapping[str, str], name: str) -> FieldOptions:
    """The ``fields.<name>.*`` options of one column's aggregate function, checked."""
    def key(prop: str) -> str:
        return f"{FIELDS_PREFIX}{name}.{prop}"

    strategy = (options.get(key("nested-key-null-strategy")) or "merge").strip().lower()
    if strategy not in _NULL_STRATEGIES:
        raise OptionError(f"option {key('nested-key-null-strategy')!r} = {strategy!r}: expected one of "
                          f"{list(_NULL_STRATEGIES)}")
    limit_raw = options.get(key("count-limit"))
    try:
        limit = int(limit_raw) if limit_raw is not None else 2**31 - 1
    except ValueError:
        raise OptionError(f"option {key('count-limit')!r} = {limit_raw!r}: expected an integer") from None
    return FieldOptions(
        ignore_retract=_bool(options, key("ignore-retract")),
        delimiter=options.get(key("list-agg-delimiter"), ","),
        distinct=_bool(options, key("distinct")),
        nested_key=_split(options.get(key("nested-key")) or ""),
        nested_key_null_strategy=strategy,
        nested_sequence_field=_split(options.get(key("nested-sequence-field")) or ""),
        count_limit=limit,
    )


def _check_field_references(schema: TableSchema, options: Mapping[str, str]) -> None:
    """Every ``fields.<names>.<property>`` of the merge engines names existing columns."""
    names = set(schema.field_names())
    for k in options:
        if not k.startswith(FIELDS_PREFIX) or k == DEFAULT_AGG_KEY:
            continue
        for prop in FIELD_PROPERTIES:
            suffix = "." + prop
            if k.endswith(suffix):
                middle = k[len(FIELDS_PREFIX):-len(suffix)]
                cols = _split(middle) if prop == "sequence-group" else (middle,)
                for c in cols:
                    if c not in names:
                        raise SchemaError(f"option {k!r} names column {c!r}, which does not exist; columns are "
                                          f"{schema.field_names()}")
                break


def _parse(schema: TableSchema, table: str) -> MergeConfig:
    raw = dict(schema.options)
    opts = CoreOptions(raw)
    engine = opts.merge_engine()
    pks = tuple(schema.primary_keys)
    names = schema.field_names()
    _check_field_references(schema, raw)
    value_fields = tuple(f for f in schema.fields if f.name not in pks)
    seq = tuple(opts.sequence_fields())
    _check_sequence_field_option(raw, table, seq, names)
    _check_rowkind_field(schema, table, opts.rowkind_field(), names)
    ignore_delete = opts.ignore_delete()
    base = {"engine": engine, "table": table, "primary_keys": pks, "value_fields": value_fields,
            "sequence_fields": seq, "ignore_delete": ignore_delete}
    if engine == "first-row":
        _check_first_row(opts, table, seq)
        return MergeConfig(**base)  # type: ignore[arg-type]
    if engine == "aggregation":
        return _parse_aggregation(schema, raw, base)
    if engine == "partial-update":
        return _parse_partial_update(schema, raw, base)
    return MergeConfig(**base)  # type: ignore[arg-type]


def _check_sequence_field_option(raw: Mapping[str, str], table: str, seq: Sequence[str], names: list[str]) -> None:
    """Each ``sequence.field`` is a column, listed once, without an aggregate function."""
    seen: set[str] = set()
    for s in seq:
        if s not in names:
            raise SchemaError(f"table {table}: sequence.field {s!r} is not a column; columns are {names}")
        if s in seen:
            raise OptionError(f"table {table}: sequence.field {s!r} is listed twice")
        seen.add(s)
        if field_property(raw, s, "aggregate-function") is not None:
            raise OptionError(f"table {table}: column {s!r} is a sequence.field and cannot have "
                              f"'fields.{s}.aggregate-function'")


def _check_rowkind_field(schema: TableSchema, table: str, rk: str | None, names: list[str]) -> None:
    """The ``rowkind.field`` (if set) is a string column."""
    if rk is None:
        return
    if rk not in names:
        raise SchemaError(f"table {table}: rowkind.field {rk!r} is not a column; columns are {names}")
    if schema.field(rk).type.root not in ("VARCHAR", "CHAR"):
        raise SchemaError(f"table {table}: rowkind.field {rk!r} must be a string column, not "
                          f"{schema.field(rk).type}")


def _check_first_row(opts: CoreOptions, table: str, seq: Sequence[str]) -> None:
    """The first-row merge engine has no ``sequence.field`` and a ``none`` or ``lookup`` changelog producer."""
    if seq:
        raise OptionError(f"table {table}: the first-row merge engine does not support 'sequence.field'")
    producer = opts.get(CHANGELOG_PRODUCER)
    if producer not in (ChangelogProducer.NONE, ChangelogProducer.LOOKUP):
        raise OptionError(f"table {table}: the first-row merge engine supports only the 'none' and 'lookup' "
                          f"changelog-producer, not {producer.value!r}")


def _function_of(raw: Mapping[str, str], f: DataField) -> tuple[str | None, str]:
    own = field_property(raw, f.name, "aggregate-function")
    if own is not None:
        return own.strip(), f"option 'fields.{f.name}.aggregate-function'"
    default = raw.get(DEFAULT_AGG_KEY)
    if default is not None:
        return default.strip(), f"option {DEFAULT_AGG_KEY!r}"
    return None, "the default aggregate function"


def _make_function(f: DataField, function: str, source: str, raw: Mapping[str, str]) -> FieldFunction:
    cls = aggregator_class(function, source)
    fo = field_options(raw, f.name)
    try:
        cls.check_type(f, fo)
    except SchemaError as e:
        raise SchemaError(f"{source}: {e}") from None
    return FieldFunction(f, cls.name, fo, source)


def _parse_aggregation(schema: TableSchema, raw: Mapping[str, str], base: dict[str, object]) -> MergeConfig:
    seq = base["sequence_fields"]
    assert isinstance(seq, tuple)
    remove_on_delete = CoreOptions(raw).get(AGGREGATION_REMOVE_RECORD_ON_DELETE)
    functions: dict[str, FieldFunction] = {}
    value_fields = base["value_fields"]
    assert isinstance(value_fields, tuple)
    for f in value_fields:
        if f.name in seq:
            functions[f.name] = FieldFunction(f, "last_value", FieldOptions(), "a sequence.field")
            continue
        function, source = _function_of(raw, f)
        ff = _make_function(f, function or DEFAULT_FUNCTION, source, raw)
        if remove_on_delete and ff.options.ignore_retract:
            raise OptionError(f"table {base['table']}: '{AGGREGATION_REMOVE_RECORD_ON_DELETE.key}' and "
                              f"'fields.{f.name}.ignore-retract' conflict; set only one of them")
        functions[f.name] = ff
    return MergeConfig(**base, functions=functions,  # type: ignore[arg-type]
                       remove_record_on_delete=remove_on_delete)


def _parse_partial_update(schema: TableSchema, raw: Mapping[str, str], base: dict[str, object]) -> MergeConfig:
    groups, protected_by, sequence_of = _sequence_groups(schema, raw)
    remove_on_delete, remove_groups = _partial_update_removal(raw, base, groups, sequence_of)
    value_fields = base["value_fields"]
    assert isinstance(value_fields, tuple)
    functions = _partial_update_functions(raw, value_fields, sequence_of, protected_by)
    return MergeConfig(**base, functions=functions, groups=tuple(groups),  # type: ignore[arg-type]
                       remove_record_on_delete=remove_on_delete, remove_on_sequence_group=remove_groups)


def _sequence_groups(schema: TableSchema, raw: Mapping[str, str]
                     ) -> tuple[list[SequenceGroup], dict[str, str], dict[str, str]]:
    """The ``fields.<seq>.sequence-group`` options, checked: the groups, protected column -> option, sequence field
    -> option."""
    pks = set(schema.primary_keys)
    names = schema.field_names()
    groups: list[SequenceGroup] = []
    protected_by: dict[str, str] = {}
    sequence_of: dict[str, str] = {}
    for k, v in raw.items():
        if not (k.startswith(FIELDS_PREFIX) and k.endswith(".sequence-group")):
            continue
        seq_fields = _split(k[len(FIELDS_PREFIX):-len(".sequence-group")])
        protected = _split(v)
        if not seq_fields or not protected:
            raise OptionError(f"option {k!r} = {v!r}: a sequence group needs sequence fields and the fields it "
                              f"protects")
        _check_sequence_fields(schema, k, seq_fields, pks, sequence_of)
        _check_protected(k, protected, names, pks, protected_by)
        groups.append(SequenceGroup(k, seq_fields, protected))
    for p, k in protected_by.items():
        if p in sequence_of:
            raise OptionError(f"option {k!r} protects {p!r}, which orders the sequence group {sequence_of[p]!r}")
    return groups, protected_by, sequence_of


def _check_sequence_fields(schema: TableSchema, k: str, seq_fields: tuple[str, ...], pks: set[str],
                           sequence_of: dict[str, str]) -> None:
    """Check the sequence fields of option ``k`` and record them in ``sequence_of``."""
    for s in seq_fields:
        st = schema.field(s).type
        if s in pks:
            raise SchemaError(f"option {k!r}: the sequence field {s!r} is a primary key column")
        if st.root not in SEQUENCE_GROUP_ROOTS:
            raise SchemaError(f"option {k!r}: the sequence field {s!r} has type {st}; a sequence group is "
                              f"ordered by DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE, DATE, "
                              f"TIME, TIMESTAMP or TIMESTAMP_LTZ")
        if s in sequence_of:
            raise OptionError(f"option {k!r}: the sequence field {s!r} orders another group already "
                              f"({sequence_of[s]!r})")
        sequence_of[s] = k


def _check_protected(k: str, protected: tuple[str, ...], names: list[str], pks: set[str],
                     protected_by: dict[str, str]) -> None:
    """Check the columns option ``k`` protects and record them in ``protected_by``."""
    for p in protected:
        if p not in names:
            raise SchemaError(f"option {k!r} protects column {p!r}, which does not exist; columns are {names}")
        if p in pks:
            raise SchemaError(f"option {k!r} protects the primary key column {p!r}; primary key columns "
                              f"cannot be in a sequence group")
        if p in protected_by:
            raise OptionError(f"option {k!r}: column {p!r} is protected by two sequence groups "
                              f"({protected_by[p]!r} too)")
        protected_by[p] = k


def _partial_update_removal(raw: Mapping[str, str], base: dict[str, object], groups: list[SequenceGroup],
                            sequence_of: Mapping[str, str]) -> tuple[bool, tuple[str, ...]]:
    """'partial-update.remove-record-on-delete' and '...-on-sequence-group', checked against 'ignore-delete' and the
    sequence groups."""
    table = base["table"]
    opts = CoreOptions(raw)
    ignore_delete = bool(base["ignore_delete"])
    remove_on_delete = opts.get(PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE)
    remove_groups_raw = opts.get(PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP)
    rd_key = PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE.key
    rg_key = PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP.key
    if ignore_delete and remove_on_delete:
        raise OptionError(f"table {table}: 'ignore-delete' and {rd_key!r} conflict; set only one of them")
    if ignore_delete and remove_groups_raw is not None:
        raise OptionError(f"table {table}: 'ignore-delete' and {rg_key!r} conflict; set only one of them")
    if remove_on_delete and groups:
        raise OptionError(f"table {table}: {rd_key!r} cannot be combined with sequence groups ("
                          f"{groups[0].option!r}); use {rg_key!r} to remove rows on a group's delete")
    remove_groups = _split(remove_groups_raw or "")
    for s in remove_groups:
        if s not in sequence_of:
            raise OptionError(f"option {rg_key!r} names {s!r}, which is not the sequence field of a sequence group "
                              f"(sequence fields: {sorted(sequence_of)})")
    return remove_on_delete, remove_groups


def _partial_update_functions(raw: Mapping[str, str], value_fields: tuple[DataField, ...],
                              sequence_of: Mapping[str, str], protected_by: Mapping[str, str]
                              ) -> dict[str, FieldFunction]:
    """The aggregate functions of a partial-update table's value columns; each needs its column in a sequence group."""
    functions: dict[str, FieldFunction] = {}
    for f in value_fields:
        if f.name in sequence_of:
            if field_property(raw, f.name, "aggregate-function") is not None:
                raise OptionError(f"option 'fields.{f.name}.aggregate-function': {f.name!r} orders a sequence "
                                  f"group and cannot be aggregated")
            continue
        function, source = _function_of(raw, f)
        if function is None:
            continue
        ff = _make_function(f, function, source, raw)
        if ff.function != DEFAULT_FUNCTION and f.name not in protected_by:
            raise OptionError(f"{source}: column {f.name!r} uses aggregate function {ff.function!r}, which in a "
                              f"partial-update table needs the column to be in a sequence group "
                              f"('fields.<seq>.sequence-group')")
        functions[f.name] = ff
    return functions


def column_functions(schema: TableSchema) -> dict[str, str]:
    """The aggregate function by which the merge engine combines each value column of a primary-key table (every
    value column of an aggregation table; the columns given one on a partial-update table); empty otherwise."""
    if not schema.primary_keys:
        return {}
    return {name: f.function for name, f in MergeConfig.parse(schema).functions.items()}
