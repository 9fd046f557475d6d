"""schemathesis's hooks for tests/api/test_openapi_contract.py (loaded through SCHEMATHESIS_HOOKS).

An id, a count or any whole number opgov reads is a JSON integer written as one: ``11``, not
``11.0`` (issue 42: ``{"proposal_ids": [11.0]}`` once voted on proposal 11). JSON Schema cannot say
so (to it, and so to the OpenAPI document, ``11.0`` *is* the integer 11), and schemathesis sends
``415.0`` for an ``integer`` it calls valid. This writes such a number as the integer it is as each
case is generated, so the run checks what the document can say; `test_hostile_input.py` checks the
refusal of ``11.0`` (422 naming the field) on every request model."""

from __future__ import annotations

from typing import Any

import schemathesis


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    return value


# applied as a case's parts are generated, refused or not: a whole number written with ``.0`` is
# valid for an ``integer`` (so never schemathesis's way to break one), and still a number where a
# string or a flag is wanted, so a case meant to be refused stays one
@schemathesis.hook
def map_body(ctx, body):
    return _whole(body)


@schemathesis.hook
def map_query(ctx, query):
    return _whole(query)
