"""schemathesis's hooks for tests/api/test_openapi_contract.py (loaded through SCHEMATHESIS_HOOKS).

An id, a count or any whole number opgov reads is a JSON integer written as one: ``11``, not
``11.0`` (issue 42: ``{"proposal_ids": [11.0]}`` once voted on proposal 11). JSON Schema cannot say
so (to it, and so to the OpenAPI document, ``11.0`` *is* the integer 11), and schemathesis sends
``415.0`` for an ``integer`` it calls valid. This writes such a number as the integer it is before
each request, so the run checks what the document can say; `test_hostile_input.py` checks the
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


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    generation = getattr(getattr(case, "meta", None), "generation", None)
    if generation is None or str(getattr(generation.mode, "value", generation.mode)) != "positive":
        return  # a case meant to be refused stays as schemathesis made it
    for part in ("body", "query", "path_parameters"):
        value = getattr(case, part, None)
        if isinstance(value, (dict, list, float)):
            setattr(case, part, _whole(value))
