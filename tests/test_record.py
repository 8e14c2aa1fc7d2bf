"""The cell record declares each column once (bench_utils/results/record.py): a row's field, its unit,
its bounds, how the rounds combine and its page label live in one Column; the schema and the pages read
them from there."""

import dataclasses
import re

from bench_utils.results.record import COMBINES, RECORD, ROW_ONLY
from bench_utils.results.row_schema import BOUNDS, STUDY_BOUNDS
from bench_utils.results.rows import BenchResult

ROW_FIELDS = {field.name for field in dataclasses.fields(BenchResult)}


def test_every_row_field_has_one_declaration_and_every_declaration_a_field():
    read = {column.field for column in RECORD if column.combine not in ("computed", "env")}
    named = {column.name for column in RECORD}
    # a field a column reads, a computed column of the same name (it describes that field), or a
    # field the record only computes from (ROW_ONLY, with its meaning): nothing else
    undeclared = ROW_FIELDS - read - named - set(ROW_ONLY)
    assert not undeclared, f"BenchResult fields without a declaration in record.py: {sorted(undeclared)}"
    assert not read - ROW_FIELDS, f"columns reading a field BenchResult lacks: {sorted(read - ROW_FIELDS)}"
    assert not set(ROW_ONLY) - ROW_FIELDS and not set(ROW_ONLY) & named
    assert len(named) == len(RECORD), "a column declared twice"
    assert all(column.combine in COMBINES for column in RECORD)


def test_the_schemas_bounds_are_the_records():
    for column in RECORD:
        if column.bounds:
            low, high = column.bounds
            assert low < high and column.field in ROW_FIELDS, column.name
            assert BOUNDS[column.field] == column.bounds
    assert set(BOUNDS) == {c.field for c in RECORD if c.bounds} | set(STUDY_BOUNDS)
    assert not set(STUDY_BOUNDS) & ROW_FIELDS  # a cell row's bounds are declared in the record, not here


def test_a_label_names_its_columns_unit():
    for column in RECORD:
        if not column.label:
            continue
        unit = re.search(r"\(([^()]*)\)$", column.label)
        if column.unit in ("", "fraction") or not unit:  # codes, text, counts of things, fractions
            assert not unit or column.unit == "", (column.name, column.label)
            continue
        assert unit.group(1) == column.unit, f"{column.name}: label {column.label!r}, unit {column.unit!r}"
