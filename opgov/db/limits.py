"""Values must fit their columns on every database, and be text every database stores.

PostgreSQL refuses a string longer than its ``VARCHAR(n)`` (with a driver error the user would
see as a traceback); SQLite stores it regardless. opgov checks every INSERT and UPDATE against the
column lengths of :mod:`opgov.db.tables` before it reaches either database, so the same input is
refused the same way on both: bad input (exit 2) naming the field, nothing written.

Every string sent with any statement (a read's filter as much as a write) is text every database
stores (opgov.core.text: no NUL, no lone surrogate): PostgreSQL answers a NUL with an error that
also spoils the connection's next request, SQLite stores it. Checked just before the statement
goes to the driver, so no use case, field or reader can miss it; refused as a request its schema
refuses (``Unprocessable``: exit 2, HTTP 422), naming the value's column or parameter.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable

from opgov.core.errors import BadInput, NotFound, Unprocessable
from opgov.core.text import UNSTORABLE, unstorable

MAX_INTEGER = 2**31 - 1  # PostgreSQL's INTEGER, which every id column is


@lru_cache(maxsize=None)
def _limits(table) -> dict[str, tuple[str, int]]:
    """column key → (column name, maximum length) for the bounded string columns of ``table``."""
    from sqlalchemy import String

    limits = {}
    for column in table.columns:
        length = getattr(column.type, "length", None)
        if isinstance(column.type, String) and length:
            limits[column.key] = (column.name, length)
    return limits


def check_lengths(table, rows: Iterable[dict[str, Any]]) -> None:
    """Raise :class:`BadInput` for the first string in ``rows`` too long for its column."""
    limits = _limits(table)
    if not limits:
        return
    bounded = list(limits.items())
    for row in rows:
        for key, (name, limit) in bounded:  # only the bounded columns: an import writes thousands of rows
            value = row.get(key)
            if value is not None and isinstance(value, str) and len(value) > limit:
                raise BadInput(f"{name} is {len(value)} characters long; at most {limit} fit "
                               f"({table.name}.{name}): {value[:40]!r}…")


def before_execute(_connection, clause, multiparams, params, _options) -> None:
    """SQLAlchemy ``before_execute`` hook: check what an INSERT or UPDATE is about to write."""
    from sqlalchemy import Table
    from sqlalchemy.sql.dml import Insert, Update

    if not isinstance(clause, (Insert, Update)) or not isinstance(clause.table, Table):
        return
    rows = list(multiparams) if multiparams else [params] if params else []
    literal = getattr(clause, "_values", None)  # .values(name=value) given on the statement
    if literal:
        rows.append({getattr(k, "key", k): getattr(v, "value", None) for k, v in literal.items()})
    for multi in getattr(clause, "_multi_values", ()) or ():
        for row in multi:
            if isinstance(row, dict):
                rows.append({getattr(k, "key", k): getattr(v, "value", None) for k, v in row.items()})
    check_lengths(clause.table, (r for r in rows if isinstance(r, dict)))


_SUFFIX = re.compile(r"(_m?\d+)+$")


def check_parameters(_connection, _cursor, _statement, parameters, context, executemany) -> None:
    """SQLAlchemy ``before_cursor_execute`` hook: refuse a string no database stores, naming the
    column or parameter it was bound to (``action_1`` is said ``action``)."""
    rows = parameters if executemany else [parameters]
    for row in rows:
        if isinstance(row, dict):
            items = row.items()
        elif isinstance(row, (tuple, list)):
            names = getattr(getattr(context, "compiled", None), "positiontup", None) or ()
            items = ((names[i] if i < len(names) else "a value", v) for i, v in enumerate(row))
        else:
            continue
        for name, value in items:
            if isinstance(value, str) and UNSTORABLE.search(value):
                shown = _SUFFIX.sub("", str(name)) or "a value"
                raise Unprocessable(f"{shown} {unstorable(value)}: {value[:40]!r}")


def check_id(value: int, what: str) -> int:
    """An id typed by a user: beyond the integer range it cannot exist."""
    if not 0 < value <= MAX_INTEGER:
        raise NotFound(f"unknown {what} {value}")
    return value
