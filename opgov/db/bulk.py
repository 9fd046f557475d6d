"""Inserting thousands of rows at once, for the import.

SQLAlchemy's ``connection.execute(insert(table), rows)`` builds and processes each row's
parameters in Python (about 20 µs a row), which for a release's ~3,000 operators, their schema
versions and their entry runs is as long as the rest of the import's database work. Here the
statement is compiled once by SQLAlchemy for the dialect and the rows go to the driver's
``executemany`` as plain tuples (``connection.exec_driver_sql``): the same statement, the same
transaction, and the same column-length check as every other write (:mod:`opgov.db.limits`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import JSON, Boolean, Integer, String, Table, Text, insert

from opgov.db.limits import check_lengths

_PLAIN = (Integer, String, Text, Boolean)  # types the drivers take as they are (and NULL of any type)


def insert_rows(connection, table: Table, rows: Sequence[dict]) -> None:
    """``INSERT`` every row of ``rows`` (dicts with the same keys) into ``table``; ``connection``
    is a Core connection or an ORM session."""
    if not rows:
        return
    if not hasattr(connection, "exec_driver_sql"):  # an ORM session: its connection, same transaction
        connection = connection.connection()
    check_lengths(table, rows)
    keys = list(rows[0])
    dumped = set()
    for key in keys:
        kind = table.c[key].type
        if isinstance(kind, JSON):
            dumped.add(key)
        elif not isinstance(kind, _PLAIN) and any(row[key] is not None for row in rows):
            raise TypeError(f"insert_rows takes plain and JSON columns only, not {table.name}.{key} ({kind})")
    compiled = insert(table).compile(dialect=connection.dialect, column_keys=keys)
    order = compiled.positiontup if compiled.positiontup is not None else keys
    if compiled.positiontup is None and connection.dialect.paramstyle not in ("named", "pyformat"):
        raise TypeError(f"unexpected parameter style {connection.dialect.paramstyle}")

    def value(row: dict, key: str):
        item = row[key]
        return json.dumps(item) if key in dumped and item is not None else item

    if compiled.positiontup is not None:
        params = [tuple(value(row, key) for key in order) for row in rows]
    else:
        params = [{key: value(row, key) for key in keys} for row in rows]
    connection.exec_driver_sql(compiled.string, params)
